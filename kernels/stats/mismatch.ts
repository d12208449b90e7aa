/**
 * How far the sampler's log-probs are from the trainer's, as verl's rollout correction logs it
 * (docs/METHODS.md 5.19), at volcengine/verl@b178a3cd5 `verl/trainer/ppo/rollout_corr_helper.py`:
 * compute_offpolicy_metrics (834-940), compute_is_metrics (601-713) and compute_rs_metrics
 * (375-478), formula for formula, including verl_F.masked_mean's +1e-8 in the denominator
 * (`verl/utils/torch_functional.py:287-301`) and which means run over tokens, over the sequences
 * with a token, or over every sequence. Pure functions on typed arrays, in float64.
 *
 * Layout: N rows of T tokens, row-major ([N * T], as the playground's [N * Tp] policy tokens);
 * `mask` is 1 on the tokens that count (verl's response_mask). logpTrain is the trainer's log-prob
 * of each token (verl's old_log_prob; the current one in bypass mode), logpRollout the sampler's.
 * The log-ratio is lr = logpTrain - logpRollout = log(pi_train / pi_rollout) (line 779).
 */

/** exp(+-20) bounds every exponentiated log-ratio (rollout_corr_helper.py:75). */
export const SAFETY_BOUND = 20;

/** verl_F.masked_mean's denominator guard (torch_functional.py:301). */
const MEAN_EPS = 1e-8;

const clampLr = (x: number) => Math.min(Math.max(x, -SAFETY_BOUND), SAFETY_BOUND);

/** The rows of a [N * T] layout. */
export function rowCount(mask: ArrayLike<number>, T: number): number {
  if (!(Number.isInteger(T) && T >= 1 && mask.length % T === 0)) throw new Error(`mismatch metrics: ${mask.length} tokens are not rows of ${T}`);
  return mask.length / T;
}

/** verl_F.masked_mean over every token: sum(m x) / (sum(m) + 1e-8); masked entries never enter (NaN-safe, as masked_sum). */
export function maskedMean(x: ArrayLike<number>, mask: ArrayLike<number>): number {
  let s = 0;
  let c = 0;
  for (let i = 0; i < mask.length; i++) {
    if (!mask[i]) continue;
    s += mask[i]! * x[i]!;
    c += mask[i]!;
  }
  return s / (c + MEAN_EPS);
}

/** Per row: sum(m x) (verl_F.masked_sum, axis -1). */
export function rowSums(x: ArrayLike<number>, mask: ArrayLike<number>, T: number): Float64Array {
  const N = rowCount(mask, T);
  const out = new Float64Array(N);
  for (let n = 0; n < N; n++) for (let t = n * T; t < (n + 1) * T; t++) if (mask[t]) out[n] = out[n]! + mask[t]! * x[t]!;
  return out;
}

/** Per row: sum(m x) / (sum(m) + 1e-8) (verl_F.masked_mean, axis -1): 0 for a row without tokens. */
export function rowMeans(x: ArrayLike<number>, mask: ArrayLike<number>, T: number): Float64Array {
  const N = rowCount(mask, T);
  const out = new Float64Array(N);
  for (let n = 0; n < N; n++) {
    let s = 0;
    let c = 0;
    for (let t = n * T; t < (n + 1) * T; t++) {
      if (!mask[t]) continue;
      s += mask[t]! * x[t]!;
      c += mask[t]!;
    }
    out[n] = s / (c + MEAN_EPS);
  }
  return out;
}

/** Whether each row has a token (seq_valid_mask, rollout_corr_helper.py:227). */
export function rowsWithTokens(mask: ArrayLike<number>, T: number): boolean[] {
  const N = rowCount(mask, T);
  return Array.from({ length: N }, (_, n) => {
    for (let t = n * T; t < (n + 1) * T; t++) if (mask[t]) return true;
    return false;
  });
}

const mean = (xs: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += xs[i]!;
  return s / xs.length;
};

/** torch's Tensor.std(): the unbiased (n - 1) standard deviation. */
function stdUnbiased(xs: ArrayLike<number>): number {
  const m = mean(xs);
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += (xs[i]! - m) ** 2;
  return Math.sqrt(s / (xs.length - 1));
}

function maxOf(xs: ArrayLike<number>): number {
  let m = -Infinity;
  for (let i = 0; i < xs.length; i++) m = Math.max(m, xs[i]!);
  return m;
}
function minOf(xs: ArrayLike<number>): number {
  let m = Infinity;
  for (let i = 0; i < xs.length; i++) m = Math.min(m, xs[i]!);
  return m;
}

function requireToken(mask: ArrayLike<number>, what: string): void {
  for (let i = 0; i < mask.length; i++) if (mask[i]) return;
  throw new Error(`${what}: the mask has no token (verl requires at least one valid token)`);
}

/** The per-token log-ratio lr = logpTrain - logpRollout, 0 where the mask is 0 (the histogram and heatmap views read it). */
export function mismatchLogRatio(logpTrain: ArrayLike<number>, logpRollout: ArrayLike<number>, mask: ArrayLike<number>): Float64Array {
  if (logpTrain.length !== mask.length || logpRollout.length !== mask.length) {
    throw new Error(`mismatch log-ratio: ${logpTrain.length} trainer and ${logpRollout.length} rollout log-probs for ${mask.length} tokens`);
  }
  return Float64Array.from(mask, (m, i) => (m ? logpTrain[i]! - logpRollout[i]! : 0));
}

/** compute_offpolicy_metrics' keys (rollout_corr_helper.py:851-859), without verl's `rollout_corr/` prefix. */
export interface OffpolicyMetrics {
  training_ppl: number;
  training_log_ppl: number;
  kl: number;
  k3_kl: number;
  rollout_ppl: number;
  rollout_log_ppl: number;
  log_ppl_diff: number;
  log_ppl_abs_diff: number;
  log_ppl_diff_max: number;
  log_ppl_diff_min: number;
  ppl_ratio: number;
  chi2_token: number;
  chi2_seq: number;
}

/**
 * The mismatch diagnostics (compute_offpolicy_metrics, rollout_corr_helper.py:834-940). Per row,
 * mean log-probs over its tokens; every "mean" over sequences runs over all N rows, as verl's
 * .mean() over the batch does (a row without tokens counts with mean log-prob 0): callers pass the
 * rows that were trained on.
 * - training_ppl = mean_i exp(-mean_t logpTrain) (877-879), training_log_ppl = mean_i(-mean_t logpTrain) (882)
 * - kl = masked_mean(logpRollout - logpTrain) = KL(pi_rollout || pi_train) estimated on the rollout's tokens (889)
 * - k3_kl = masked_mean(exp(lr) - lr - 1) (894-896): lr is not clamped here in verl, so neither is it here
 * - rollout_ppl, rollout_log_ppl likewise (899-902)
 * - log_ppl_diff_i = mean_t logpRollout - mean_t logpTrain = log(training_ppl_i / rollout_ppl_i): its
 *   mean, mean |.|, max, min (909-913)
 * - ppl_ratio = mean_i exp(log_ppl_diff_i) (920): the mean of per-sequence ratios, not the ratio of
 *   the means (verl's docs write exp(mean log), the code takes the mean of exp)
 * - chi2_token = masked_mean(exp(clamp(lr, +-20))^2) - 1 (927-931)
 * - chi2_seq = mean_i exp(2 clamp(sum_t lr, +-20)) - 1 (934-938)
 */
export function offpolicyMetrics(logpTrain: ArrayLike<number>, logpRollout: ArrayLike<number>, mask: ArrayLike<number>, T: number): OffpolicyMetrics {
  requireToken(mask, 'offpolicyMetrics');
  const lr = mismatchLogRatio(logpTrain, logpRollout, mask);
  const meanTrain = rowMeans(logpTrain, mask, T);
  const meanRoll = rowMeans(logpRollout, mask, T);
  const N = meanTrain.length;
  const diff = Float64Array.from(meanTrain, (mt, n) => meanRoll[n]! - mt);
  const lrSum = rowSums(lr, mask, T);
  return {
    training_ppl: mean(Float64Array.from(meanTrain, (m) => Math.exp(-m))),
    training_log_ppl: mean(Float64Array.from(meanTrain, (m) => -m)),
    kl: maskedMean(Float64Array.from(lr, (x) => -x), mask),
    k3_kl: maskedMean(Float64Array.from(lr, (x) => Math.exp(x) - x - 1), mask),
    rollout_ppl: mean(Float64Array.from(meanRoll, (m) => Math.exp(-m))),
    rollout_log_ppl: mean(Float64Array.from(meanRoll, (m) => -m)),
    log_ppl_diff: mean(diff),
    log_ppl_abs_diff: mean(Float64Array.from(diff, Math.abs)),
    log_ppl_diff_max: N ? maxOf(diff) : 0,
    log_ppl_diff_min: N ? minOf(diff) : 0,
    ppl_ratio: mean(Float64Array.from(diff, Math.exp)),
    chi2_token: maskedMean(Float64Array.from(lr, (x) => Math.exp(clampLr(x)) ** 2), mask) - 1,
    chi2_seq: mean(Float64Array.from(lrSum, (s) => Math.exp(2 * clampLr(s)))) - 1,
  };
}

/** The IS levels (rollout_is, rollout_corr_helper.py:523). */
export type RolloutIsLevel = 'token' | 'sequence';

/**
 * compute_is_metrics (rollout_corr_helper.py:601-713) on the IS weights before truncation (as
 * compute_rollout_correction_weights calls it, 552-559): `weights` [N * T], exp(clamp(lr)) per
 * token or per row broadcast, times the mask; `logRatioForMetrics` the unclamped per-token lr
 * (token level) or per-row sum of lr ([N], sequence level); C the truncation threshold, 1/C the
 * lower one (632). Keys without verl's `rollout_corr/` prefix.
 */
export function isMetrics(
  weights: ArrayLike<number>,
  logRatioForMetrics: ArrayLike<number>,
  mask: ArrayLike<number>,
  T: number,
  level: RolloutIsLevel,
  threshold: number,
): Record<string, number> {
  requireToken(mask, 'isMetrics');
  const out: Record<string, number> = {};
  const lower = 1 / threshold;
  const logUpper = Math.log(threshold);
  const logLower = Math.log(lower);
  if (level === 'sequence') {
    // 639-653: max and min from the unclamped per-row sums (every row), the mean from the weights.
    out.rollout_is_max = Math.exp(Math.min(maxOf(logRatioForMetrics), SAFETY_BOUND));
    out.rollout_is_min = Math.exp(minOf(logRatioForMetrics));
    out.rollout_is_mean = maskedMean(weights, mask);
    out.rollout_is_ratio_fraction_high = mean(Float64Array.from(logRatioForMetrics, (x) => (x > logUpper ? 1 : 0)));
    out.rollout_is_ratio_fraction_low = mean(Float64Array.from(logRatioForMetrics, (x) => (x < logLower ? 1 : 0)));
  } else {
    // 655-672
    out.rollout_is_mean = maskedMean(weights, mask);
    out.rollout_is_ratio_fraction_high = maskedMean(Float64Array.from(weights, (w) => (w > threshold ? 1 : 0)), mask);
    out.rollout_is_ratio_fraction_low = maskedMean(Float64Array.from(weights, (w) => (w < lower ? 1 : 0)), mask);
    let mx = -Infinity;
    let mn = Infinity;
    for (let i = 0; i < mask.length; i++) {
      if (!mask[i]) continue;
      mx = Math.max(mx, weights[i]!);
      mn = Math.min(mn, weights[i]!);
    }
    out.rollout_is_max = mx;
    out.rollout_is_min = mn;
  }
  // 675-686 and 689-694: the std and the ESS of the weights clamped to [1/C, C].
  const clamped = Float64Array.from(weights, (w) => Math.min(Math.max(w, lower), threshold));
  let count = 0;
  for (let i = 0; i < mask.length; i++) count += mask[i]!;
  if (count > 1) {
    const m = maskedMean(clamped, mask);
    const v = maskedMean(Float64Array.from(clamped, (w) => w * w), mask) - m * m;
    out.rollout_is_std = Math.sqrt(Math.max(v, 0));
  } else out.rollout_is_std = 0;
  const mEss = maskedMean(clamped, mask);
  out.rollout_is_eff_sample_size = 1 / maskedMean(Float64Array.from(clamped, (w) => (w / (mEss + MEAN_EPS)) ** 2), mask);
  // 697-711: per-row means of the weights, over every row.
  const seqMean = rowMeans(weights, mask, T);
  out.rollout_is_seq_mean = mean(seqMean);
  out.rollout_is_seq_std = seqMean.length > 1 ? stdUnbiased(seqMean) : 0;
  out.rollout_is_seq_max = maxOf(seqMean);
  out.rollout_is_seq_min = minOf(seqMean);
  out.rollout_is_seq_max_deviation = maxOf(Float64Array.from(seqMean, (w) => Math.abs(w - 1)));
  out.rollout_is_seq_fraction_high = mean(Float64Array.from(seqMean, (w) => (w > threshold ? 1 : 0)));
  out.rollout_is_seq_fraction_low = mean(Float64Array.from(seqMean, (w) => (w < lower ? 1 : 0)));
  return out;
}

/**
 * compute_rs_metrics (rollout_corr_helper.py:375-478) for one rejection option: `stat` [N * T] its
 * per-token statistic (for a sequence option the row's statistic broadcast to its tokens, 299-300),
 * `perSequence` the row statistic of a sequence option (null for a token option: row means of
 * `stat` instead, 408-411), thresholds as compute_rollout_rejection_mask passes them (335-336):
 * for k1 options in log space with the lower one applied, for k2/k3 the upper one and lower 0.
 */
export function rsMetrics(
  option: string,
  stat: ArrayLike<number>,
  mask: ArrayLike<number>,
  T: number,
  level: 'token' | 'sequence',
  perSequence: ArrayLike<number> | null,
  upper: number,
  lower: number,
  applyLower: boolean,
): Record<string, number> {
  requireToken(mask, 'rsMetrics');
  const p = `rollout_rs_${option}`;
  const out: Record<string, number> = {};
  const valid = rowsWithTokens(mask, T);
  const seqValues = perSequence ?? rowMeans(stat, mask, T);
  const seqValid = Array.from(seqValues).filter((_, n) => valid[n]);
  out[`${p}_mean`] = maskedMean(stat, mask);
  const bySeq = level === 'sequence' && seqValid.length > 0;
  if (bySeq) {
    out[`${p}_max`] = maxOf(seqValid);
    out[`${p}_min`] = minOf(seqValid);
    out[`${p}_fraction_high`] = mean(seqValid.map((v) => (v > upper ? 1 : 0)));
    out[`${p}_fraction_low`] = applyLower ? mean(seqValid.map((v) => (v < lower ? 1 : 0))) : 0;
  } else {
    let mx = -Infinity;
    let mn = Infinity;
    for (let i = 0; i < mask.length; i++) {
      if (!mask[i]) continue;
      mx = Math.max(mx, stat[i]!);
      mn = Math.min(mn, stat[i]!);
    }
    out[`${p}_max`] = mx;
    out[`${p}_min`] = mn;
    out[`${p}_fraction_high`] = maskedMean(Float64Array.from(stat, (s) => (s > upper ? 1 : 0)), mask);
    out[`${p}_fraction_low`] = applyLower ? maskedMean(Float64Array.from(stat, (s) => (s < lower ? 1 : 0)), mask) : 0;
  }
  // 444-455: the std of the statistic clamped to [lower or 0, upper].
  let count = 0;
  for (let i = 0; i < mask.length; i++) count += mask[i]!;
  if (count > 1) {
    const lo = applyLower ? lower : 0;
    const c = Float64Array.from(stat, (s) => Math.min(Math.max(s, lo), upper));
    const m = maskedMean(c, mask);
    out[`${p}_std`] = Math.sqrt(Math.max(maskedMean(Float64Array.from(c, (x) => x * x), mask) - m * m, 0));
  } else out[`${p}_std`] = 0;
  // 458-476 (the mask has a token, so some row is valid).
  out[`${p}_seq_mean`] = mean(seqValid);
  out[`${p}_seq_std`] = seqValid.length > 1 ? stdUnbiased(seqValid) : 0;
  out[`${p}_seq_max`] = maxOf(seqValid);
  out[`${p}_seq_min`] = minOf(seqValid);
  out[`${p}_seq_max_deviation`] = maxOf(seqValid.map(Math.abs));
  out[`${p}_seq_fraction_high`] = mean(seqValid.map((v) => (v > upper ? 1 : 0)));
  if (applyLower) out[`${p}_seq_fraction_low`] = mean(seqValid.map((v) => (v < lower ? 1 : 0)));
  return out;
}
