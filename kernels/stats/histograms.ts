/**
 * The constants the metrics kernel (kernels/stats/stats.ts) and the trainer share: what counts as
 * a zero advantage, and the fixed histogram bins. Metric names are a contract of workers/core/metrics.ts,
 * which re-exports these.
 */

/**
 * Largest |advantage| adv_zero_frac counts as zero. Rewards the task means to be equal can differ
 * in their last bits (CM2's checklist averages a trajectory's turns: thirds, rounded to f32), and a
 * member whose reward is the group mean in exact arithmetic then got exactly 0 from the GPU's f32
 * mean and ~1e-9 from the CPU backend's float64 one: on the tools task with CM2 the two backends'
 * adv_zero_frac differed by up to 0.07 on the same rollouts. An advantage this small carries no
 * signal either way; real ones differ from 0 by the reward's scale (1/12 there), after std scaling
 * too.
 */
export const ADV_ZERO_TOL = 1e-6;

/** Fixed histogram bins: advantages over [-3, 3], log-ratios over [-0.5, 0.5]; ends catch the rest. */
export const HIST_BINS = 24;
export const ADV_HIST_RANGE = [-3, 3] as const;
export const LOGRATIO_HIST_RANGE = [-0.5, 0.5] as const;

export function histEdges(range: readonly [number, number], bins = HIST_BINS): number[] {
  const [lo, hi] = range;
  return Array.from({ length: bins + 1 }, (_, i) => lo + ((hi - lo) * i) / bins);
}
