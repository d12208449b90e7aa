/**
 * The rollout corrections of docs/METHODS.md 5.19: importance weights and rejection masks that
 * correct for a sampler that is not the trainer, as verl computes them at volcengine/verl@b178a3cd5
 * `verl/trainer/ppo/rollout_corr_helper.py` (line numbers below are that file's), plus the
 * catastrophic-token veto that verl removed in 97eac9048 (read at its parent 9b718e1a7). Pure
 * functions on [N * T] rows (kernels/stats/mismatch.ts says the layout), in float64, in log space:
 * every ratio is exp of a log-ratio clamped to +-20 (SAFETY_BOUND) first.
 *
 * lr = logpTrain - logpRollout = log rho, rho = pi_train / pi_rollout (779).
 * - IS weights (compute_rollout_correction_weights, 481-598): token w_t = exp(clamp(lr_t)), or
 *   sequence w_i = exp(clamp(sum_t m lr_t)) broadcast to the row's tokens; times the mask; metrics
 *   of these; then truncated from above at C (TIS; no lower truncation); then, optionally,
 *   divided by their batch mean (token: over tokens; sequence: over the rows with a token).
 * - Rejection (compute_rollout_rejection_mask, 156-372): per option a statistic of
 *   lr_safe = clamp(lr, +-20): k1 = -lr_safe, k2 = lr_safe^2 / 2, k3 = exp(lr_safe) - 1 - lr_safe,
 *   taken per token (token_*), or per row as the masked sum (seq_sum_*), masked mean (seq_mean_*:
 *   seq_mean_k1 is the geometric rejection) or masked max (seq_max_*); kept iff the statistic is
 *   within its bounds; every option must pass (their masks multiply). k1's bounds bound
 *   -log rho = log(pi_rollout / pi_train), given as ratios and compared in log space: "lower_upper"
 *   keeps 1/upper <= rho <= 1/lower, which for the default lower = 1/upper is
 *   1/upper <= rho <= upper. The mask replaces the loss mask: rejected tokens are out of the loss,
 *   the IS weights are untouched (test_rollout_corr.py:311-365).
 * - Veto (rollout_corr_helper.py:656-681 at 9b718e1a7): a row with any token whose lr < log tau
 *   (rho < tau) is rejected whole. At b178a3cd5 the option is gone; its successors are the
 *   two-sided seq_max_k2 / seq_max_k3 rejections.
 */
import {
  isMetrics,
  maskedMean,
  mismatchLogRatio,
  offpolicyMetrics,
  rowCount,
  rowMeans,
  rowsWithTokens,
  rowSums,
  rsMetrics,
  SAFETY_BOUND,
  type RolloutIsLevel,
} from '../stats/mismatch';

export type { RolloutIsLevel } from '../stats/mismatch';

/** SUPPORTED_ROLLOUT_RS_OPTIONS (rollout_corr_helper.py:77-89), in that order. */
export const ROLLOUT_RS_OPTIONS = [
  'token_k1', 'token_k2', 'token_k3',
  'seq_sum_k1', 'seq_sum_k2', 'seq_sum_k3',
  'seq_mean_k1', 'seq_mean_k2', 'seq_mean_k3',
  'seq_max_k2', 'seq_max_k3',
] as const;
export type RolloutRsOption = (typeof ROLLOUT_RS_OPTIONS)[number];

/** One option's bounds: k1 options have both (ratios), k2 and k3 an upper one only. */
export interface RsBounds {
  lower: number | null;
  upper: number;
}

const clampLr = (x: number) => Math.min(Math.max(x, -SAFETY_BOUND), SAFETY_BOUND);

/**
 * The options of a `rollout_rs` string (comma separated, spaces allowed, duplicates dropped in
 * order, 202-217) with their bounds from `rollout_rs_threshold` (_parse_rollout_rs_thresholds,
 * 93-153): one spec for every option or one per option; for a k1 option "lower_upper" or a single
 * upper whose reciprocal is the lower; for k2 and k3 a single positive upper bound.
 */
export function parseRolloutRs(rolloutRs: string, threshold: string | number): Array<{ option: RolloutRsOption; bounds: RsBounds }> {
  const options: RolloutRsOption[] = [];
  for (const raw of rolloutRs.split(',')) {
    const o = raw.trim();
    if (!o) continue;
    if (!(ROLLOUT_RS_OPTIONS as readonly string[]).includes(o)) throw new Error(`rollout_rs option ${o}: expected one of ${[...ROLLOUT_RS_OPTIONS].sort().join(', ')}`);
    if (!options.includes(o as RolloutRsOption)) options.push(o as RolloutRsOption);
  }
  if (options.length === 0) throw new Error('rollout_rs: expected at least one option');
  let specs = typeof threshold === 'number' ? [String(threshold)] : threshold.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  if (specs.length === 0) throw new Error('rollout_rs_threshold: expected at least one threshold');
  if (specs.length !== 1 && specs.length !== options.length) {
    throw new Error(`rollout_rs_threshold: expected one threshold for every option or one per option (${options.length}), got ${specs.length}`);
  }
  if (specs.length === 1) specs = options.map(() => specs[0]!);
  return options.map((option, i) => {
    const spec = specs[i]!;
    const num = (s: string) => {
      const x = Number(s);
      if (s.trim() === '' || !Number.isFinite(x)) throw new Error(`rollout_rs_threshold '${spec}' for ${option}: not a number`);
      return x;
    };
    if (option.endsWith('k1')) {
      const [lo, hi] = spec.includes('_') ? [num(spec.slice(0, spec.indexOf('_'))), num(spec.slice(spec.indexOf('_') + 1))] : [1 / num(spec), num(spec)];
      if (!(lo > 0 && hi > 0)) throw new Error(`rollout_rs_threshold '${spec}' for ${option}: bounds must be positive`);
      return { option, bounds: { lower: lo, upper: hi } };
    }
    if (spec.includes('_')) throw new Error(`rollout_rs_threshold '${spec}' for ${option}: a single upper bound, without '_'`);
    const hi = num(spec);
    if (!(hi > 0)) throw new Error(`rollout_rs_threshold '${spec}' for ${option}: must be positive`);
    return { option, bounds: { lower: null, upper: hi } };
  });
}

export interface IsWeights {
  /** [N * T] truncated (and, if asked, batch-normalized) IS weights; 0 where the mask is 0. */
  weights: Float64Array;
  metrics: Record<string, number>;
}

/** compute_rollout_correction_weights (rollout_corr_helper.py:481-598). */
export function rolloutIsWeights(
  logRatio: ArrayLike<number>,
  mask: ArrayLike<number>,
  T: number,
  level: RolloutIsLevel,
  threshold: number,
  batchNormalize = false,
): IsWeights {
  if (!(threshold > 0)) throw new Error(`rollout_is_threshold ${threshold}: must be positive`);
  const N = rowCount(mask, T);
  let w: Float64Array;
  let forMetrics: ArrayLike<number>;
  if (level === 'token') {
    // 530-534
    forMetrics = logRatio;
    w = Float64Array.from(mask, (_, i) => Math.exp(clampLr(logRatio[i]!)));
  } else {
    // 536-544: the row's sum of unclamped log-ratios, clamped once.
    const sums = rowSums(logRatio, mask, T);
    forMetrics = sums;
    w = Float64Array.from(mask, (_, i) => Math.exp(clampLr(sums[Math.floor(i / T)]!)));
  }
  // 550: padding weighs 0; 553-559: the metrics before truncation.
  for (let i = 0; i < w.length; i++) w[i] = w[i]! * mask[i]!;
  const metrics = isMetrics(w, forMetrics, mask, T, level, threshold);
  // 562: TIS.
  for (let i = 0; i < w.length; i++) w[i] = Math.min(w[i]!, threshold);
  if (batchNormalize) {
    // 569-596
    let m: number;
    if (level === 'token') m = maskedMean(w, mask);
    else {
      const seqW = rowMeans(w, mask, T);
      const valid = rowsWithTokens(mask, T);
      let s = 0;
      let c = 0;
      for (let n = 0; n < N; n++) if (valid[n]) {
        s += seqW[n]!;
        c += 1;
      }
      m = s / Math.max(c, 1e-8);
    }
    if (m > 1e-8) {
      for (let i = 0; i < w.length; i++) w[i] = w[i]! / m;
      metrics.rollout_is_batch_norm_factor = m;
    } else metrics.rollout_is_batch_norm_factor = 1;
  }
  return { weights: w, metrics };
}

export interface RejectionMask {
  /** [N * T] the loss mask with the rejected tokens set to 0. */
  mask: Float64Array;
  metrics: Record<string, number>;
}

/** compute_rollout_rejection_mask (rollout_corr_helper.py:156-372). */
export function rolloutRejectionMask(logRatio: ArrayLike<number>, mask: ArrayLike<number>, T: number, rolloutRs: string, threshold: string | number): RejectionMask {
  const parsed = parseRolloutRs(rolloutRs, threshold);
  const N = rowCount(mask, T);
  // 221-224
  const k1 = Float64Array.from(mask, (_, i) => -clampLr(logRatio[i]!));
  const k2 = Float64Array.from(mask, (_, i) => 0.5 * clampLr(logRatio[i]!) ** 2);
  const k3 = Float64Array.from(mask, (_, i) => Math.exp(clampLr(logRatio[i]!)) - 1 - clampLr(logRatio[i]!));
  const valid = rowsWithTokens(mask, T);
  const combined = new Float64Array(mask.length).fill(1);
  const metrics: Record<string, number> = {};
  for (const { option, bounds } of parsed) {
    const k = option.endsWith('k1') ? k1 : option.endsWith('k2') ? k2 : k3;
    const isK1 = bounds.lower !== null;
    const lowerLog = isK1 ? Math.log(bounds.lower!) : 0;
    const upperLog = isK1 ? Math.log(bounds.upper) : bounds.upper;
    const within = (s: number) => (isK1 ? s >= lowerLog && s <= upperLog : s <= bounds.upper);
    let stat: Float64Array;
    let perSeq: Float64Array | null = null;
    let keep: Float64Array;
    if (option.startsWith('token_')) {
      stat = k;
      keep = Float64Array.from(k, (s) => (within(s) ? 1 : 0));
    } else {
      if (option.startsWith('seq_sum')) perSeq = rowSums(k, mask, T);
      else if (option.startsWith('seq_mean')) perSeq = rowMeans(k, mask, T);
      else {
        // _sequence_max (238-243): over the row's tokens, 0 for a row without one.
        perSeq = new Float64Array(N);
        for (let n = 0; n < N; n++) {
          let mx = -Infinity;
          for (let t = n * T; t < (n + 1) * T; t++) if (mask[t]) mx = Math.max(mx, k[t]!);
          perSeq[n] = mx === -Infinity ? 0 : mx;
        }
      }
      const ps = perSeq;
      stat = Float64Array.from(mask, (_, i) => ps[Math.floor(i / T)]!);
      keep = Float64Array.from(mask, (_, i) => (within(ps[Math.floor(i / T)]!) ? 1 : 0));
    }
    Object.assign(metrics, rsMetrics(option, stat, mask, T, option.startsWith('token_') ? 'token' : 'sequence', perSeq, upperLog, lowerLog, isK1));
    for (let i = 0; i < combined.length; i++) combined[i] = combined[i]! * keep[i]!;
    // 355-363: the fraction of tokens, and of rows with a token, this option rejects.
    metrics[`rollout_rs_${option}_masked_fraction`] = maskedMean(Float64Array.from(keep, (x) => 1 - x), mask);
    let rejected = 0;
    let rows = 0;
    for (let n = 0; n < N; n++) {
      if (!valid[n]) continue;
      rows++;
      for (let t = n * T; t < (n + 1) * T; t++) if (mask[t] && !keep[t]) {
        rejected++;
        break;
      }
    }
    metrics[`rollout_rs_${option}_seq_masked_fraction`] = rows > 0 ? rejected / rows : 0;
  }
  // 365-371: over every row (a row without tokens counts as not masked).
  metrics.rollout_rs_masked_fraction = maskedMean(Float64Array.from(combined, (x) => 1 - x), mask);
  let hit = 0;
  for (let n = 0; n < N; n++) {
    for (let t = n * T; t < (n + 1) * T; t++) if (mask[t] && !(combined[t]! > 0.5)) {
      hit++;
      break;
    }
  }
  metrics.rollout_rs_seq_masked_fraction = N > 0 ? hit / N : 0;
  return { mask: Float64Array.from(mask, (m, i) => m * combined[i]!), metrics };
}

/**
 * The catastrophic-token veto, as verl had it until 97eac9048 (rollout_corr_helper.py:656-681 at
 * its parent 9b718e1a7): a row with any token whose IS ratio is below tau, lr < log tau on the
 * unclamped log-ratio, is rejected whole; metrics rollout_is_veto_fraction (over every row) and
 * rollout_is_catastrophic_token_fraction (over tokens). tau: its presets used 1e-4.
 */
export function tokenVeto(logRatio: ArrayLike<number>, mask: ArrayLike<number>, T: number, tau: number): RejectionMask {
  if (!(tau > 0)) throw new Error(`rollout_token_veto_threshold ${tau}: must be positive`);
  const N = rowCount(mask, T);
  const logTau = Math.log(tau);
  const catastrophic = Float64Array.from(mask, (m, i) => (m && logRatio[i]! < logTau ? 1 : 0));
  const out = Float64Array.from(mask);
  let vetoed = 0;
  for (let n = 0; n < N; n++) {
    let hit = false;
    for (let t = n * T; t < (n + 1) * T; t++) if (catastrophic[t]) hit = true;
    if (!hit) continue;
    vetoed++;
    out.fill(0, n * T, (n + 1) * T);
  }
  return {
    mask: out,
    metrics: { rollout_is_veto_fraction: N > 0 ? vetoed / N : 0, rollout_is_catastrophic_token_fraction: maskedMean(catastrophic, mask) },
  };
}

/** algorithm.rollout_correction's keys that act on a batch (rollout_correction.yaml), plus the veto. */
export interface RolloutCorrectionConfig {
  rolloutIs: RolloutIsLevel | null;
  rolloutIsThreshold: number;
  rolloutIsBatchNormalize: boolean;
  rolloutRs: string | null;
  rolloutRsThreshold: string | number | null;
  /** The removed rollout_token_veto_threshold (null: off). */
  vetoThreshold: number | null;
}

export interface RolloutCorrection {
  /** [N * T] IS weights, null when rolloutIs is null. */
  weights: Float64Array | null;
  /** [N * T] the loss mask after rejection and veto. */
  mask: Float64Array;
  /** Every metric, with verl's `rollout_corr/` prefix. */
  metrics: Record<string, number>;
}

/**
 * compute_rollout_correction_and_rejection_mask (rollout_corr_helper.py:716-831): IS weights,
 * rejection mask, then (the removed step 4 of 9b718e1a7) the veto on top of it, and the
 * off-policy metrics on the original mask; every key prefixed `rollout_corr/`.
 */
export function rolloutCorrection(
  logpTrain: ArrayLike<number>,
  logpRollout: ArrayLike<number>,
  mask: ArrayLike<number>,
  T: number,
  cfg: RolloutCorrectionConfig,
): RolloutCorrection {
  let any = false;
  for (let i = 0; i < mask.length; i++) if (mask[i]) any = true;
  if (!any) throw new Error('rolloutCorrection: the mask has no token (verl requires at least one valid token)');
  const lr = mismatchLogRatio(logpTrain, logpRollout, mask);
  const metrics: Record<string, number> = {};
  let weights: Float64Array | null = null;
  if (cfg.rolloutIs !== null) {
    const w = rolloutIsWeights(lr, mask, T, cfg.rolloutIs, cfg.rolloutIsThreshold, cfg.rolloutIsBatchNormalize);
    weights = w.weights;
    Object.assign(metrics, w.metrics);
  }
  let out: Float64Array = Float64Array.from(mask);
  if (cfg.rolloutRs !== null) {
    if (cfg.rolloutRsThreshold === null) throw new Error('rollout_rs_threshold must be given when rollout_rs is set');
    const r = rolloutRejectionMask(lr, mask, T, cfg.rolloutRs, cfg.rolloutRsThreshold);
    out = r.mask;
    Object.assign(metrics, r.metrics);
  }
  if (cfg.vetoThreshold !== null) {
    const v = tokenVeto(lr, mask, T, cfg.vetoThreshold);
    for (let i = 0; i < out.length; i++) out[i] = out[i]! * v.mask[i]!;
    Object.assign(metrics, v.metrics);
  }
  Object.assign(metrics, offpolicyMetrics(logpTrain, logpRollout, mask, T));
  return { weights, mask: out, metrics: Object.fromEntries(Object.entries(metrics).map(([k, v]) => [`rollout_corr/${k}`, v])) };
}
