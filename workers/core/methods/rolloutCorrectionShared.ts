/**
 * What the rollout-correction entries (tis, seqis, tokenrs, seqrs, geors, veto; docs/METHODS.md
 * 5.19) share: how each hook adds its part to plan.rolloutCorrection (verl's
 * algorithm.rollout_correction, one config for all of them), their common refusals, and their verl
 * keys. The entries are the data and hooks of methods whose weights and masks both backends apply
 * in the update; they join the registry (methods/index.ts, ROLLOUT_CORRECTION_METHODS) together
 * with that stage.
 */
import type { RolloutCorrectionConfig, RolloutRsOption } from '../../../kernels/loss/rolloutCorrection';
import type { Plan } from '../plan';

/**
 * Methods whose tokens are not all drawn by the sampler (ReGFT's hints, EDGE-GRPO's reference
 * turns): the sampler's log-prob of such a token is the kernels' stand-in, not a behaviour
 * probability, so no weight or rejection of it means anything.
 */
export const FORCED_TOKEN_METHODS = ['regft', 'edge'] as const;

/** The verl option that turns on the rollout's own log-probs, which every correction reads. */
export const CALCULATE_LOG_PROBS = { key: 'actor_rollout_ref.rollout.calculate_log_probs', value: true, from: [] as string[] };

export const VERL_RC = 'algorithm.rollout_correction';

/** The plan's correction, created with nothing on. */
export function correctionOf(plan: Plan): RolloutCorrectionConfig {
  plan.rolloutCorrection ??= {
    rolloutIs: null, rolloutIsThreshold: 2, rolloutIsBatchNormalize: false, rolloutRs: null, rolloutRsThreshold: null, vetoThreshold: null,
  };
  return plan.rolloutCorrection;
}

/** A rejection option and its threshold spec, chained after those already on (verl's comma lists: every option must pass). */
export function addRejection(plan: Plan, option: RolloutRsOption, spec: string): void {
  const c = correctionOf(plan);
  c.rolloutRs = c.rolloutRs ? `${c.rolloutRs},${option}` : option;
  c.rolloutRsThreshold = c.rolloutRsThreshold === null ? spec : `${c.rolloutRsThreshold},${spec}`;
}

/** verl's threshold spec of one option: "lower_upper" for k1, the upper bound alone for k2 and k3. */
export const rsSpec = (option: RolloutRsOption, lower: number, upper: number): string => (option.endsWith('k1') ? `${lower}_${upper}` : `${upper}`);
