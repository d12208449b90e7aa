/**
 * The mismatch metrics (kernels/stats/mismatch.ts) and the rollout corrections
 * (kernels/loss/rolloutCorrection.ts) on cases worked by hand, against the formulas of verl's
 * rollout_corr_helper.py at b178a3cd5 (and the veto at 9b718e1a7). verl's masked means divide by
 * count + 1e-8, which moves a mean by 1e-8 / count relative, and an exp of it by that times its
 * argument: rtol 1e-7 covers it on the hand-written values, which leave the 1e-8 out.
 */
import { describe, expect, it } from 'vitest';
import { offpolicyMetrics, isMetrics, mismatchLogRatio } from '../../kernels/stats/mismatch';
import {
  parseRolloutRs,
  rolloutCorrection,
  rolloutIsWeights,
  rolloutRejectionMask,
  tokenVeto,
  ROLLOUT_RS_OPTIONS,
} from '../../kernels/loss/rolloutCorrection';
import { expectClose } from '../helpers/expectClose';

const TOL = { atol: 1e-9, rtol: 1e-7 };
const close = (got: number, want: number) => expectClose([got], [want], TOL);

// Two rows of T = 3: row 0 has two tokens (its third is padding, NaN on purpose), row 1 three.
// lr = logpTrain - logpRollout = [0.5, -0.5, -] and [0, 0.5, -0.2].
const T = 3;
const MASK = [1, 1, 0, 1, 1, 1];
const TRAIN = [-1, -2, NaN, -0.5, -0.5, -0.5];
const ROLL = [-1.5, -1.5, NaN, -0.5, -1.0, -0.3];

describe('the mismatch metrics (compute_offpolicy_metrics)', () => {
  const m = offpolicyMetrics(TRAIN, ROLL, MASK, T);
  it('kl and k3 over tokens', () => {
    close(m.kl, -(0.5 - 0.5 + 0 + 0.5 - 0.2) / 5);
    const k3 = (x: number) => Math.exp(x) - x - 1;
    close(m.k3_kl, (k3(0.5) + k3(-0.5) + k3(0) + k3(0.5) + k3(-0.2)) / 5);
  });
  it('perplexities per row, then the mean over rows', () => {
    // Row means: trainer -1.5 and -0.5, rollout -1.5 and -0.6.
    close(m.training_ppl, (Math.exp(1.5) + Math.exp(0.5)) / 2);
    close(m.training_log_ppl, 1);
    close(m.rollout_ppl, (Math.exp(1.5) + Math.exp(0.6)) / 2);
    close(m.rollout_log_ppl, 1.05);
    // log_ppl_diff = rollout mean - trainer mean: 0 and -0.1.
    close(m.log_ppl_diff, -0.05);
    close(m.log_ppl_abs_diff, 0.05);
    close(m.log_ppl_diff_max, 0);
    close(m.log_ppl_diff_min, -0.1);
    close(m.ppl_ratio, (1 + Math.exp(-0.1)) / 2);
  });
  it('chi-square per token and per row', () => {
    close(m.chi2_token, (2 * Math.exp(1) + Math.exp(-1) + 1 + Math.exp(-0.4)) / 5 - 1);
    // Row sums of lr: 0 and 0.3.
    close(m.chi2_seq, (1 + Math.exp(0.6)) / 2 - 1);
  });
  it('are all zero (and ratios 1) when the sampler is the trainer', () => {
    const z = offpolicyMetrics(TRAIN, TRAIN, MASK, T);
    // chi2_token is 5 / (5 + 1e-8) - 1 = -2e-9 there, verl's masked mean and all.
    for (const x of [z.kl, z.k3_kl, z.log_ppl_diff, z.log_ppl_abs_diff, z.chi2_token, z.chi2_seq]) expect(Math.abs(x)).toBeLessThan(1e-8);
    expect(z.ppl_ratio).toBe(1);
    expect(z.training_ppl).toBe(z.rollout_ppl);
  });
  it('clamps the chi-square log-ratios at 20, and refuses a mask without tokens', () => {
    const c = offpolicyMetrics([0, 0], [-100, 0], [1, 1], 2);
    close(c.chi2_token, (Math.exp(40) + 1) / 2 - 1);
    close(c.chi2_seq, Math.exp(40) - 1);
    expect(() => offpolicyMetrics([0], [0], [0], 1)).toThrow(/no token/);
  });
  it('the per-token log-ratio is trainer minus sampler, 0 off the mask', () => {
    expectClose(mismatchLogRatio(TRAIN, ROLL, MASK), [0.5, -0.5, 0, 0, 0.5, -0.2], TOL);
  });
});

describe('IS weights (compute_rollout_correction_weights)', () => {
  it("verl's test_mask_mode: token weights e^-1 and e^0.5, kept as ratios when token_k1 rejects the first row", () => {
    const train = Array(10).fill(-2);
    const roll = [...Array(5).fill(-1), ...Array(5).fill(-2.5)];
    const mask = Array(10).fill(1);
    const r = rolloutCorrection(train, roll, mask, 5, {
      rolloutIs: 'token', rolloutIsThreshold: 2, rolloutIsBatchNormalize: false, rolloutRs: 'token_k1', rolloutRsThreshold: '0.5_2.0', vetoThreshold: null,
    });
    expectClose(r.weights!, [...Array(5).fill(Math.exp(-1)), ...Array(5).fill(Math.exp(0.5))], TOL);
    expect(Array.from(r.mask)).toEqual([...Array(5).fill(0), ...Array(5).fill(1)]);
    close(r.metrics['rollout_corr/rollout_rs_masked_fraction']!, 0.5);
    close(r.metrics['rollout_corr/rollout_rs_seq_masked_fraction']!, 0.5);
  });

  it('token level: exp(lr) truncated at C, no lower truncation, padding 0; metrics before truncation', () => {
    const lr = mismatchLogRatio(TRAIN, ROLL, MASK);
    const { weights, metrics } = rolloutIsWeights(lr, MASK, T, 'token', 1.5);
    expectClose(weights, [1.5, Math.exp(-0.5), 0, 1, 1.5, Math.exp(-0.2)], TOL);
    close(metrics.rollout_is_max!, Math.exp(0.5));
    close(metrics.rollout_is_min!, Math.exp(-0.5));
    close(metrics.rollout_is_mean!, (2 * Math.exp(0.5) + Math.exp(-0.5) + 1 + Math.exp(-0.2)) / 5);
    close(metrics.rollout_is_ratio_fraction_high!, 2 / 5);
    close(metrics.rollout_is_ratio_fraction_low!, 1 / 5); // e^-0.5 < 1/1.5
    // Std and ESS of the weights clamped to [1/C, C].
    const c = [1.5, 2 / 3, 1, 1.5, Math.exp(-0.2)];
    const mu = c.reduce((a, b) => a + b) / 5;
    close(metrics.rollout_is_std!, Math.sqrt(c.reduce((a, b) => a + b * b, 0) / 5 - mu * mu));
    close(metrics.rollout_is_eff_sample_size!, 1 / (c.reduce((a, b) => a + (b / mu) ** 2, 0) / 5));
    // Row means of the untruncated weights.
    const rows = [(Math.exp(0.5) + Math.exp(-0.5)) / 2, (1 + Math.exp(0.5) + Math.exp(-0.2)) / 3];
    close(metrics.rollout_is_seq_mean!, (rows[0]! + rows[1]!) / 2);
    close(metrics.rollout_is_seq_max_deviation!, Math.max(...rows.map((x) => Math.abs(x - 1))));
  });

  it('sequence level: exp of the row sum of lr, broadcast, truncated; batch-normalized over rows', () => {
    const lr = mismatchLogRatio(TRAIN, ROLL, MASK);
    const plain = rolloutIsWeights(lr, MASK, T, 'sequence', 1.2);
    // Row sums 0 and 0.3: weights 1 and min(e^0.3, 1.2).
    expectClose(plain.weights, [1, 1, 0, 1.2, 1.2, 1.2], TOL);
    close(plain.metrics.rollout_is_max!, Math.exp(0.3));
    close(plain.metrics.rollout_is_min!, 1);
    close(plain.metrics.rollout_is_ratio_fraction_high!, 0.5);
    close(plain.metrics.rollout_is_ratio_fraction_low!, 0);
    close(plain.metrics.rollout_is_mean!, (2 + 3 * Math.exp(0.3)) / 5);
    const norm = rolloutIsWeights(lr, MASK, T, 'sequence', 1.2, true);
    close(norm.metrics.rollout_is_batch_norm_factor!, 1.1);
    expectClose(norm.weights, [1 / 1.1, 1 / 1.1, 0, 1.2 / 1.1, 1.2 / 1.1, 1.2 / 1.1], TOL);
  });

  it('token batch normalization divides by the mean over tokens', () => {
    const r = rolloutIsWeights([Math.log(3), 0, 0, 0], [1, 1, 1, 0], 2, 'token', 2, true);
    close(r.metrics.rollout_is_batch_norm_factor!, 4 / 3);
    expectClose(r.weights, [1.5, 0.75, 0.75, 0], TOL);
  });

  it('a sequence log-ratio past 20 is clamped before exp, and the metric max says exp(20)', () => {
    const r = rolloutIsWeights([15, 15], [1, 1], 2, 'sequence', 1e12);
    close(r.weights[0]!, Math.exp(20));
    close(r.metrics.rollout_is_max!, Math.exp(20));
    const s = isMetrics([1, 1], [30], [1, 1], 2, 'sequence', 2);
    close(s.rollout_is_max!, Math.exp(20));
  });
});

describe('rejection (compute_rollout_rejection_mask)', () => {
  const lr = mismatchLogRatio(TRAIN, ROLL, MASK);
  const keep = (rs: string, th: string | number) => Array.from(rolloutRejectionMask(lr, MASK, T, rs, th).mask);

  it('token_k2 keeps tokens with lr^2 / 2 at most the bound', () => {
    expect(keep('token_k2', 0.1)).toEqual([0, 0, 0, 1, 0, 1]);
    expect(keep('token_k2', 0.2)).toEqual([1, 1, 0, 1, 1, 1]);
  });
  it('seq_sum_k1 (Seq-MIS) bounds the row sum of -lr in log space', () => {
    // -sum lr: 0 and -0.3; log 0.7 = -0.357, log 0.8 = -0.223.
    expect(keep('seq_sum_k1', '0.7_1.4')).toEqual([1, 1, 0, 1, 1, 1]);
    expect(keep('seq_sum_k1', '0.8_1.25')).toEqual([1, 1, 0, 0, 0, 0]);
  });
  it('seq_mean_k1 (geometric) bounds the row mean of -lr', () => {
    // Means 0 and -0.1; log 0.9 = -0.105, log 0.95 = -0.051.
    expect(keep('seq_mean_k1', '0.9_1.1')).toEqual([1, 1, 0, 1, 1, 1]);
    expect(keep('seq_mean_k1', '0.95_1.05')).toEqual([1, 1, 0, 0, 0, 0]);
  });
  it('seq_max_k2 and seq_mean_k3', () => {
    expect(keep('seq_max_k2', 0.1)).toEqual([0, 0, 0, 0, 0, 0]); // both rows have a 0.125
    expect(keep('seq_max_k2', 0.13)).toEqual([1, 1, 0, 1, 1, 1]);
    const k3 = (x: number) => Math.exp(x) - 1 - x;
    const row0 = (k3(0.5) + k3(-0.5)) / 2; // 0.1276
    const row1 = (k3(0) + k3(0.5) + k3(-0.2)) / 3; // 0.0558
    expect(row0 > 0.06 && row1 > 0.05 && row1 < 0.06).toBe(true);
    expect(keep('seq_mean_k3', 0.05)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(keep('seq_mean_k3', 0.06)).toEqual([0, 0, 0, 1, 1, 1]);
  });
  it('k1 bounds -log rho: an asymmetric "lower_upper" keeps 1/upper <= rho <= 1/lower', () => {
    // "0.7_2.0" rejects rho = e^0.5 = 1.65 (1/0.7 = 1.43 < 1.65) though 1.65 < 2.
    expect(keep('token_k1', '0.7_2.0')).toEqual([0, 1, 0, 1, 0, 1]);
    // A single number is the upper bound, its reciprocal the lower: symmetric.
    expect(keep('token_k1', 1.5)).toEqual([0, 0, 0, 1, 0, 1]); // e^-0.5 = 0.61 < 1/1.5 too
    expect(keep('token_k1', 2)).toEqual([1, 1, 0, 1, 1, 1]);
  });
  it('chained options must all pass, and the metrics say who rejected what', () => {
    const r = rolloutRejectionMask(lr, MASK, T, 'token_k1, seq_mean_k1', '0.5_2.0,0.95_1.05');
    expect(Array.from(r.mask)).toEqual([1, 1, 0, 0, 0, 0]);
    close(r.metrics.rollout_rs_token_k1_masked_fraction!, 0);
    close(r.metrics.rollout_rs_seq_mean_k1_masked_fraction!, 3 / 5);
    close(r.metrics.rollout_rs_seq_mean_k1_seq_masked_fraction!, 1 / 2);
    close(r.metrics.rollout_rs_masked_fraction!, 3 / 5);
    close(r.metrics.rollout_rs_seq_masked_fraction!, 1 / 2);
    // compute_rs_metrics of the geometric option: the row statistic (mean of -lr: 0 and -0.1),
    // token-weighted for _mean, over rows for the rest, against log 0.95 and log 1.05.
    close(r.metrics.rollout_rs_seq_mean_k1_mean!, (2 * 0 + 3 * -0.1) / 5);
    close(r.metrics.rollout_rs_seq_mean_k1_max!, 0);
    close(r.metrics.rollout_rs_seq_mean_k1_min!, -0.1);
    close(r.metrics.rollout_rs_seq_mean_k1_seq_mean!, -0.05);
    close(r.metrics.rollout_rs_seq_mean_k1_fraction_high!, 0);
    close(r.metrics.rollout_rs_seq_mean_k1_fraction_low!, 0.5);
    close(r.metrics.rollout_rs_seq_mean_k1_seq_fraction_low!, 0.5);
  });
  it('clamps lr at +-20 before the statistics', () => {
    const r = rolloutRejectionMask([30, 0], [1, 1], 2, 'seq_max_k2', 199);
    expect(Array.from(r.mask)).toEqual([0, 0]);
    const s = rolloutRejectionMask([30, 0], [1, 1], 2, 'seq_max_k2', 200);
    expect(Array.from(s.mask)).toEqual([1, 1]);
  });
  it('every supported option runs and reports its mean (test_each_supported_rollout_rs_option)', () => {
    for (const o of ROLLOUT_RS_OPTIONS) {
      const r = rolloutRejectionMask(lr, MASK, T, o, o.endsWith('k1') ? '0.5_1.5' : 2);
      expect(r.metrics[`rollout_rs_${o}_mean`], o).toBeTypeOf('number');
      expect(r.mask.length).toBe(MASK.length);
      expect(Array.from(r.mask).every(Number.isFinite)).toBe(true);
    }
  });
});

describe('threshold specs (_parse_rollout_rs_thresholds)', () => {
  it('parses, broadcasts and refuses as verl does', () => {
    expect(parseRolloutRs('token_k1', 2)).toEqual([{ option: 'token_k1', bounds: { lower: 0.5, upper: 2 } }]);
    expect(parseRolloutRs('token_k1,seq_max_k3,token_k1', '0.4_1.8,3.0')).toEqual([
      { option: 'token_k1', bounds: { lower: 0.4, upper: 1.8 } },
      { option: 'seq_max_k3', bounds: { lower: null, upper: 3 } },
    ]);
    expect(parseRolloutRs('seq_sum_k2,seq_mean_k3', 2.5).map((p) => p.bounds.upper)).toEqual([2.5, 2.5]);
    expect(() => parseRolloutRs('geometric', 2)).toThrow(/rollout_rs option geometric/);
    expect(() => parseRolloutRs('token_k2', '0.5_2')).toThrow(/without '_'/);
    expect(() => parseRolloutRs('token_k1', '0_2')).toThrow(/positive/);
    expect(() => parseRolloutRs('token_k1,token_k2', '1,2,3')).toThrow(/one per option/);
    expect(() => parseRolloutRs('seq_max_k1', 2)).toThrow(/seq_max_k1/);
  });
});

describe('the veto (rollout_token_veto_threshold, removed after 9b718e1a7)', () => {
  it('drops a whole row that has a token with rho below tau, on the unclamped log-ratio', () => {
    // Row 1's middle token: lr = -1 < log 0.5.
    const v = tokenVeto([0.5, -0.5, 0, 0, -1, 0.2], MASK, T, 0.5);
    expect(Array.from(v.mask)).toEqual([1, 1, 0, 0, 0, 0]);
    close(v.metrics.rollout_is_veto_fraction!, 0.5);
    close(v.metrics.rollout_is_catastrophic_token_fraction!, 1 / 5);
    // A padding token never vetoes.
    expect(Array.from(tokenVeto([0, 0, -50, 0, 0, 0], MASK, T, 1e-4).mask)).toEqual(MASK);
  });
  it('joins the rejection mask in rolloutCorrection, after it', () => {
    const r = rolloutCorrection([0, 0, 0, 0], [0, 10, 0, 0], [1, 1, 1, 1], 2, {
      rolloutIs: null, rolloutIsThreshold: 2, rolloutIsBatchNormalize: false, rolloutRs: null, rolloutRsThreshold: null, vetoThreshold: 1e-4,
    });
    expect(r.weights).toBeNull();
    expect(Array.from(r.mask)).toEqual([0, 0, 1, 1]);
    close(r.metrics['rollout_corr/rollout_is_veto_fraction']!, 0.5);
    close(r.metrics['rollout_corr/kl']!, 10 / 4);
  });
});

describe('NaN-free: padding values never enter', () => {
  it('with NaN log-probs in padding, every output is finite', () => {
    const r = rolloutCorrection(TRAIN, ROLL, MASK, T, {
      rolloutIs: 'sequence', rolloutIsThreshold: 2, rolloutIsBatchNormalize: true, rolloutRs: 'seq_mean_k3,token_k1', rolloutRsThreshold: '0.5,0.5_2', vetoThreshold: 1e-4,
    });
    expect(Array.from(r.weights!).every(Number.isFinite)).toBe(true);
    expect(Array.from(r.mask).every(Number.isFinite)).toBe(true);
    for (const [k, v] of Object.entries(r.metrics)) expect(Number.isFinite(v), k).toBe(true);
  });
});
