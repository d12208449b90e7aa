import { ConfigError, ESTIMATOR_IDS, withMethods, type RunConfig } from '../workers/meta';

const isEstimator = (m: string) => ESTIMATOR_IDS.includes(m);

/**
 * The method set after toggling `id`. An advantage estimator switched on replaces the active one
 * (a run has exactly one), so estimators behave like radio buttons.
 */
export function toggledMethods(active: readonly string[], id: string): string[] {
  if (active.includes(id)) return active.filter((m) => m !== id);
  return [...(isEstimator(id) ? active.filter((m) => !isEstimator(m)) : active), id];
}

/** Why a method's toggle is disabled, in words for beside it; null when it may be toggled. */
export interface ToggleBlocker {
  text: string;
  /**
   * 'estimator': the run's own advantage estimator, which only another estimator replaces (a
   * normal state, not an error); 'refused': switching it on would make a set the config refuses.
   */
  kind: 'estimator' | 'refused';
}

export function toggleBlocker(config: RunConfig, id: string): ToggleBlocker | null {
  const active = config.methods;
  // The config's own message for this case reads "...; none is active", true of the set after the
  // click, but beside the active estimator it read as if the run were broken.
  if (active.includes(id) && isEstimator(id) && active.filter(isEstimator).length === 1) {
    return { kind: 'estimator', text: "The run's advantage estimator: a run needs exactly one, so switching another one on replaces it." };
  }
  try {
    withMethods(config, toggledMethods(active, id));
    return null;
  } catch (e) {
    return { kind: 'refused', text: e instanceof ConfigError ? e.expected : e instanceof Error ? e.message : String(e) };
  }
}
