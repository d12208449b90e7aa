/**
 * What the rollout-correction entries (tis, seqis, tokenrs, seqrs, geors, veto; docs/METHODS.md
 * 5.19) share: how each hook adds its part to plan.rolloutCorrection (verl's
 * algorithm.rollout_correction, one config for all of them), their common refusals, and their verl
 * keys. The entries are the data and hooks of methods whose weights and masks both backends apply
 * in the update (workers/core/update/correctionStages.ts).
 */
import type { RolloutCorrectionConfig, RolloutRsOption } from '../../../kernels/loss/rolloutCorrection';
import type { Plan } from '../plan';

/**
 * Methods whose tokens are not all drawn by the sampler (ReGFT's hints, EDGE-GRPO's reference
 * turns): the sampler's log-prob of such a token is the kernels' stand-in, not a behaviour
 * probability, so no weight or rejection of it means anything.
 */
export const FORCED_TOKEN_METHODS = ['regft', 'edge'] as const;

/** Why every correction refuses the forced-token methods, in words. */
const FORCED_WHY = {
  regft: 'ReGFT\'s hinted tokens were not drawn by the sampler, so their sampler log-prob is a stand-in and no IS weight or rejection of them means anything',
  edge: 'EDGE-GRPO\'s reference turns were not drawn by the sampler, so their sampler log-prob is a stand-in and no IS weight or rejection of them means anything',
};

/** Why an IS-weight correction (tis, seqis) refuses what it refuses, in words. */
export const IS_WEIGHT_WHY = {
  ...FORCED_WHY,
  vcpo: 'VCPO already weights each rollout by its capped sequence ratio to the sampler; a second IS weight on the same ratio counts it twice',
  otb: 'verl\'s OTB multiplies its baseline weights by the squared IS weight, which the token-baseline kernel here does not take, so OTB\'s baseline would not be the one the weights correct',
};

/** The conflicts of a rejection entry (tokenrs, seqrs, geors, veto): only the forced-token methods. */
export const REJECTION_CONFLICTS = { conflicts: [...FORCED_TOKEN_METHODS], conflictReasons: FORCED_WHY };

/** What the batch lab does not show of every correction. */
export const CORRECTION_LAB_NOTE =
  'The batch lab re-scores a frozen batch without the rollout correction; the run applies its weights and rejection in every update.';

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
