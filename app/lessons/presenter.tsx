/**
 * Presenter mode's chart filter: only the charts the current step is about stay visible (its
 * `watch` list, else the charts of the metrics its lines read). The charts panel is left as it is;
 * a generated style rule hides the other figures (by their `chart-<id>` test ids).
 */
import { lessonById } from '../../workers/meta';
import { useAppStore } from '../store';
import { stepCharts } from './charts';

/** The CSS that hides every chart but `keep` inside the charts panel. */
export function presenterCss(keep: readonly string[]): string {
  const not = keep.map((id) => `:not([data-testid="chart-${id.replace(/[^a-z0-9_-]/gi, '')}"])`).join('');
  return `.presenting .charts figure.chart${not} { display: none; }`;
}

export function PresenterStyle() {
  const presenter = useAppStore((s) => s.presenter);
  const ref = useAppStore((s) => s.lesson);
  const lesson = ref ? lessonById(ref.id) : undefined;
  const step = lesson?.steps[(ref?.step ?? 1) - 1];
  if (!presenter || !lesson || !step) return null;
  return <style data-testid="presenter-style">{presenterCss(stepCharts(lesson, step))}</style>;
}
