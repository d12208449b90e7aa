/**
 * The advantage stage's options and the estimator codes (advantage.ts documents each estimator).
 * A module of its own, without the kernel's WGSL, so the engine's plan and the UI read them without
 * loading shader source.
 */

export const ADV_ESTIMATORS = ['group', 'rloo', 'raw', 'reinforce', 'turn', 'turnGroup', 'gigpo', 'opob'] as const;
/** Index in ADV_ESTIMATORS = the WGSL `EST_*` code. */
export type AdvEstimator = (typeof ADV_ESTIMATORS)[number];

export interface AdvantageOptions {
  estimator: AdvEstimator;
  /** group, turnGroup, gigpo (episode part), opob: divide by std + eps. */
  scaleStd: boolean;
  /** group statistics: std with G - 1 (verl) rather than G. IGPO's pools always use the population std. */
  unbiasedStd: boolean;
  eps: number;
  /** group/rloo/raw: statistics per (group, role) over roleRewards (Dr. MAS). */
  byRole: boolean;
  /** EDGE-GRPO EDA: advantage of n times Pbar / P_n. */
  entropyScale: boolean;
  /** EDA's factor clamped to [0.1, 10] (the reference code's commented-out variant). */
  entropyClamp: boolean;
  /** Divide by the std only where it is above this (VCPO: 1e-8); 0 divides wherever std > 0. */
  stdMin: number;
  /** turn, gigpo step returns, reinforce reward-to-go. */
  gamma: number;
  /** turn: z-score final-turn rewards and earlier-turn rewards as two pools. */
  separate: boolean;
  /** gigpo omega. */
  stepWeight: number;
  /** reinforce: subtract the group mean of R first (REINFORCE++-baseline). */
  baseline: boolean;
  /** reinforce: beta; each token reward -= beta (logpOld - logpRef) (k1). */
  klInReward: number;
  /** opob: multiply A by min(exp(logIS_n), isCap); 0 = no IS weight at all (logIS treated as 0). */
  isCap: number;
}

/** GRPO as verl runs it; every other option off. */
export const ADVANTAGE_DEFAULTS: Readonly<AdvantageOptions> = {
  estimator: 'group',
  scaleStd: true,
  unbiasedStd: true,
  eps: 1e-6,
  byRole: false,
  entropyScale: false,
  entropyClamp: false,
  stdMin: 0,
  gamma: 1,
  separate: false,
  stepWeight: 1,
  baseline: false,
  klInReward: 0,
  isCap: 0,
};
