/** Chart ids a lesson may name for presenter mode (the scalar groups and the distribution charts), and a step's charts. */
import { isDumpStat, type Lesson, type LessonStep, type SeriesStat } from '../../workers/meta';
import { chartGroups } from '../charts/chartGroups';

/** Charts that are not scalar-metric groups (app/panels/MetricsCharts.tsx), by id (`chart-<id>`). */
export const EXTRA_CHART_IDS = ['adv-hist', 'ratio-hist', 'mismatch-hist', 'adv-heatmap', 'ratio-heatmap', 'mismatch-heatmap'] as const;

export function lessonChartIds(): string[] {
  return [...chartGroups().map((g) => g.id), ...EXTRA_CHART_IDS];
}

/** Charts presenter mode shows beside a step: at most this many fit a 1280x720 screen with the Group view. */
const STEP_CHARTS = 2;

/**
 * The live charts a step is about: those its text tells you to watch, else the charts of the
 * metrics its lines read, else (lines that read only the batch dump) the lesson's first charts.
 */
export function stepCharts(lesson: Lesson, step: LessonStep): string[] {
  if (step.watch?.length) return step.watch.slice(0, STEP_CHARTS);
  const groups = chartGroups();
  const ids: string[] = [];
  for (const id of step.claims) {
    const c = lesson.claims.find((x) => x.id === id);
    for (const s of c ? [c.a, c.b] : []) {
      if (typeof s !== 'object' || isDumpStat(s)) continue;
      const g = groups.find((x) => x.metrics.includes((s as SeriesStat).metric));
      if (g && !ids.includes(g.id)) ids.push(g.id);
    }
  }
  return (ids.length > 0 ? ids : lesson.charts).slice(0, STEP_CHARTS);
}
