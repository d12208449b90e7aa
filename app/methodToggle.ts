import { ESTIMATOR_IDS } from '../workers/methods';

/**
 * The method set after toggling `id`. An advantage estimator switched on replaces the active one
 * (a run has exactly one), so estimators behave like radio buttons.
 */
export function toggledMethods(active: readonly string[], id: string): string[] {
  if (active.includes(id)) return active.filter((m) => m !== id);
  const isEstimator = (m: string) => (ESTIMATOR_IDS as readonly string[]).includes(m);
  return [...(isEstimator(id) ? active.filter((m) => !isEstimator(m)) : active), id];
}
