/**
 * Metric names are a contract (docs/ARCHITECTURE.md "Metric names"): the CLI prints them as JSON lines, the UI
 * charts them, tests read them. Add a metric here, in METRIC_DOCS and METRIC_NAMES; charts pick it up.
 */

export const SCALAR_METRICS = [
  'iter',
  'reward_mean',
  'success_rate',
  'adv_mean',
  'adv_std',
  'adv_zero_frac',
  'groups_all_equal_frac',
  'ratio_mean',
  'ratio_min',
  'ratio_max',
  'clip_frac',
  'clip_frac_low',
  'clip_frac_high',
  'entropy',
  'kl_ref',
  'grad_norm',
  'ess',
  'ess_rollout',
  'lr',
  'loss',
  'neg_out_grad_share',
  'mismatch_logratio',
  'mismatch_k3_kl',
  'mismatch_chi2_token',
  'mismatch_chi2_seq',
  'mismatch_ppl_ratio',
  'tokens',
  'rollouts',
  'ms',
] as const;
export type ScalarMetric = (typeof SCALAR_METRICS)[number];

export const METRIC_DOCS: Record<ScalarMetric, string> = {
  iter: 'Iteration number (1-based).',
  reward_mean: 'Mean training reward of the policy\'s own first-round rollouts (before filtering, hints or corrections).',
  success_rate: 'Fraction of the policy\'s own first-round rollouts that solved the task.',
  adv_mean: 'Mean advantage over policy tokens.',
  adv_std: 'Std of the advantage over policy tokens.',
  adv_zero_frac: 'Fraction of policy tokens whose advantage is 0 (|A| <= 1e-6: no learning signal, up to the rounding of the rewards).',
  groups_all_equal_frac: 'Fraction of the trained groups whose rewards are all equal: Advantage Collapse (0 by construction under dynamic sampling).',
  ratio_mean: 'Mean importance ratio pi/pi_old over policy tokens.',
  ratio_min: 'Smallest importance ratio.',
  ratio_max: 'Largest importance ratio.',
  clip_frac: 'Fraction of policy tokens whose surrogate was clipped.',
  clip_frac_low: 'Clipped on the low side (ratio < 1 - clipLow, negative advantage).',
  clip_frac_high: 'Clipped on the high side (ratio > 1 + clipHigh, positive advantage).',
  entropy: 'Mean policy entropy (nats) at policy tokens.',
  kl_ref: 'Mean KL estimate (the configured estimator) to the reference policy (the initial one, or ProRL\'s last reset).',
  grad_norm: 'Global gradient norm before clipping (last optimizer step).',
  ess: 'Normalized effective sample size of the sequence IS weights pi/pi_old after the update, in (0, 1].',
  ess_rollout: 'Normalized ESS of the weights pi_old/mu of stale rollouts (1 when rollouts are fresh); VCPO scales the lr by it.',
  lr: 'Learning rate applied (after VCPO\'s ESS scaling).',
  loss: 'Aggregated policy loss (mean over the last epoch\'s optimizer steps).',
  neg_out_grad_share: 'ARLArena\'s crash diagnosis: share of the last epoch\'s |dL/dlogp| on negative-advantage tokens whose ratio is outside [0.8, 1.2] (a strict clip\'s bounds, whatever the run\'s clip; docs/ARENA.md).',
  mismatch_logratio: 'Rollout-training mismatch: mean over policy tokens of log pi_old - log pi_rollout, the trainer\'s log-prob over the sampler\'s (0 when the sampler is the trainer; its negative is verl\'s rollout_corr/kl).',
  mismatch_k3_kl: 'Rollout-training mismatch: mean k3 estimate exp(r) - r - 1 of the KL, r = log pi_old/pi_rollout per token (verl\'s rollout_corr/k3_kl).',
  mismatch_chi2_token: 'Rollout-training mismatch: mean of (pi_old/pi_rollout)^2 - 1 over policy tokens, the chi-square divergence (verl\'s rollout_corr/chi2_token).',
  mismatch_chi2_seq: 'Rollout-training mismatch: mean over trajectories of (prod_t pi_old/pi_rollout)^2 - 1 (verl\'s rollout_corr/chi2_seq).',
  mismatch_ppl_ratio: 'Rollout-training mismatch: mean over trajectories of the trainer\'s perplexity over the sampler\'s (1: none; verl\'s rollout_corr/ppl_ratio).',
  tokens: 'Policy tokens in the batch.',
  rollouts: 'Trajectories rolled out this iteration: the generation cost of dynamic sampling, DARS and corrections.',
  ms: 'Wall time of the iteration in milliseconds.',
};

/**
 * Each metric's name in words, for chart titles, legends and menus (the id stays in tables, exports
 * and tooltips). Short enough for a legend; IS is importance sampling, ESS effective sample size.
 */
export const METRIC_NAMES: Record<ScalarMetric, string> = {
  iter: 'Iteration',
  reward_mean: 'Mean reward',
  success_rate: 'Success rate',
  adv_mean: 'Mean advantage',
  adv_std: 'Advantage spread (std)',
  adv_zero_frac: 'Zero-advantage tokens',
  groups_all_equal_frac: 'All-equal groups',
  ratio_mean: 'Mean IS ratio',
  ratio_min: 'Smallest IS ratio',
  ratio_max: 'Largest IS ratio',
  clip_frac: 'Clipped tokens',
  clip_frac_low: 'Clipped low',
  clip_frac_high: 'Clipped high',
  entropy: 'Entropy',
  kl_ref: 'KL to the reference',
  grad_norm: 'Gradient norm',
  ess: 'Effective sample size (ESS)',
  ess_rollout: 'ESS of stale rollouts',
  lr: 'Learning rate',
  loss: 'Loss',
  neg_out_grad_share: 'Crash diagnosis share',
  tokens: 'Policy tokens',
  rollouts: 'Rollouts',
  mismatch_logratio: 'Mean log-ratio, trainer over sampler',
  mismatch_k3_kl: 'Sampler mismatch KL (k3)',
  mismatch_chi2_token: 'Sampler mismatch chi-square per token',
  mismatch_chi2_seq: 'Sampler mismatch chi-square per trajectory',
  mismatch_ppl_ratio: 'Perplexity ratio, trainer over sampler',
  ms: 'Iteration time (ms)',
};

// The kernel side of the metrics (the zero tolerance and the histograms' bins) lives with the
// stats kernel that computes them.
export { ADV_HIST_RANGE, ADV_ZERO_TOL, HIST_BINS, histEdges, LOGRATIO_HIST_RANGE } from '../../kernels/stats/histograms';

export type MetricRow = Record<ScalarMetric, number> & {
  adv_hist: number[];
  adv_hist_edges: number[];
  ratio_hist: number[];
  ratio_hist_edges: number[];
  /** Per-token log pi_old/pi_rollout, in the ratio histogram's bins (absent from rows read from older run files and imported logs). */
  mismatch_hist?: number[];
  mismatch_hist_edges?: number[];
};
