/**
 * Presenter mode's chart filter: only the charts a lesson names stay visible. The charts panel is
 * left as it is; a generated style rule hides the other figures (by their `chart-<id>` test ids).
 */
import { lessonById } from '../../workers/content/lessons';
import { useAppStore } from '../store';

/** The CSS that hides every chart but `keep` inside the charts panel. */
export function presenterCss(keep: readonly string[]): string {
  const not = keep.map((id) => `:not([data-testid="chart-${id.replace(/[^a-z0-9_-]/gi, '')}"])`).join('');
  return `.presenting .charts figure.chart${not} { display: none; }`;
}

export function PresenterStyle() {
  const presenter = useAppStore((s) => s.presenter);
  const lessonId = useAppStore((s) => s.lesson?.id);
  const lesson = lessonId ? lessonById(lessonId) : undefined;
  if (!presenter || !lesson) return null;
  return <style data-testid="presenter-style">{presenterCss(lesson.charts)}</style>;
}
