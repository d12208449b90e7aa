/** Chart ids a lesson may name for presenter mode: the scalar groups and the distribution charts. */
import { chartGroups } from '../charts/chartGroups';

/** Charts that are not scalar-metric groups (app/panels/MetricsCharts.tsx), by id (`chart-<id>`). */
export const EXTRA_CHART_IDS = ['adv-hist', 'ratio-hist', 'adv-heatmap', 'ratio-heatmap'] as const;

export function lessonChartIds(): string[] {
  return [...chartGroups().map((g) => g.id), ...EXTRA_CHART_IDS];
}
