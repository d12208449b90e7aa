/**
 * How far the sampler's log-probs are from the trainer's over an update's policy tokens
 * (docs/METHODS.md 5.19), the per-iteration metrics: verl's rollout-correction diagnostics
 * (mismatch.ts has them formula for formula, with verl's lines) reduced to a few scalars and a
 * histogram that one small kernel computes on the device. With lr_t = logpOld_t - logpRollout_t
 * (log pi_old / pi_rollout, the trainer over the sampler) over masked tokens, and rows the
 * trajectories with at least one masked token:
 *
 *   logratio   = mean_t lr                          (verl's `kl` is its negative: KL(pi_rollout || pi_old) on the rollout's tokens)
 *   k3_kl      = mean_t (e^c - c - 1), c = clamp(lr, +-20)
 *   chi2_token = mean_t (e^2c - 1)
 *   chi2_seq   = mean_rows (e^(2 clamp(sum_t lr, +-20)) - 1)
 *   ppl_ratio  = mean_rows exp(-mean_t lr) = mean_rows training_ppl / rollout_ppl
 *   hist       = counts of lr in the fixed log-ratio bins of the ratio histogram
 *
 * Departures from verl, each so that nothing here can overflow in f32: k3 takes the clamped
 * log-ratio (verl leaves it unclamped; a token whose |lr| > 20 is already beyond any use of it), and
 * means divide by max(count, 1) instead of count + 1e-8. ppl_ratio and chi2_seq average over the
 * rows that have a token, which are verl's whole batch (it has no rows without one).
 * Near 0, exp(x) - 1 and exp(x) - 1 - x are Taylor polynomials on both backends: a bf16 sampler's
 * log-ratios are ~1e-3, where the f32 subtraction would leave no correct digit.
 */
import { defineKernel, uniformLayout } from '../pipeline';
import { HIST_BINS, LOGRATIO_HIST_RANGE } from './histograms';
import { histBin } from './stats';
import mismatchStatsWGSL from './mismatchStats.wgsl?raw';

export interface MismatchStatsInput {
  /** [N * Tp] 0/1 loss mask. */
  mask: ArrayLike<number>;
  /** [N * Tp] the trainer's log-probs of the drawn tokens (the old policy, full precision, whole distribution). */
  logpOld: ArrayLike<number>;
  /** [N * Tp] the sampler's. */
  logpRollout: ArrayLike<number>;
  Tp: number;
}

export interface MismatchStats {
  mismatch_logratio: number;
  mismatch_k3_kl: number;
  mismatch_chi2_token: number;
  mismatch_chi2_seq: number;
  mismatch_ppl_ratio: number;
  mismatch_hist: number[];
}

export const MISMATCH_FIELDS = ['mismatch_logratio', 'mismatch_k3_kl', 'mismatch_chi2_token', 'mismatch_chi2_seq', 'mismatch_ppl_ratio'] as const satisfies ReadonlyArray<keyof MismatchStats>;
/** f32 words of the kernel's output: the scalars, then the histogram. */
export const MISMATCH_WORDS = MISMATCH_FIELDS.length + HIST_BINS;

const BOUND = 20;
const SERIES = 0.125;
const clamp = (x: number) => Math.min(Math.max(x, -BOUND), BOUND);

/** exp(x) - 1, a Taylor polynomial near 0 (the kernel's expm1s). */
export function expm1s(x: number): number {
  return Math.abs(x) < SERIES ? x * (1 + x * (1 / 2 + x * (1 / 6 + x * (1 / 24 + x / 120)))) : Math.exp(x) - 1;
}

/** exp(x) - 1 - x, a Taylor polynomial near 0 (the kernel's k3s). */
export function k3s(x: number): number {
  return Math.abs(x) < SERIES ? x * x * (1 / 2 + x * (1 / 6 + x * (1 / 24 + x / 120))) : Math.exp(x) - 1 - x;
}

/** The metrics in float64 on the f32 log-ratios the kernel forms (the kernel sums in f32). */
export function mismatchStatsCpu(x: MismatchStatsInput): MismatchStats {
  const { Tp } = x;
  const N = x.mask.length / Tp;
  const hist = new Array<number>(HIST_BINS).fill(0);
  let lrSum = 0;
  let k3Sum = 0;
  let chiSum = 0;
  let seqChi = 0;
  let ppl = 0;
  let tokens = 0;
  let rows = 0;
  for (let n = 0; n < N; n++) {
    let rowSum = 0;
    let rowCount = 0;
    for (let i = n * Tp; i < (n + 1) * Tp; i++) {
      if (x.mask[i] === 0) continue;
      const lr = Math.fround(x.logpOld[i]! - x.logpRollout[i]!);
      const c = clamp(lr);
      lrSum += lr;
      k3Sum += k3s(c);
      chiSum += expm1s(2 * c);
      rowSum += lr;
      rowCount++;
      hist[histBin(lr, LOGRATIO_HIST_RANGE[0], LOGRATIO_HIST_RANGE[1])]!++;
    }
    if (rowCount === 0) continue;
    seqChi += expm1s(2 * clamp(rowSum));
    ppl += Math.exp(-rowSum / rowCount);
    tokens += rowCount;
    rows++;
  }
  const t = Math.max(tokens, 1);
  const r = Math.max(rows, 1);
  return {
    mismatch_logratio: lrSum / t,
    mismatch_k3_kl: k3Sum / t,
    mismatch_chi2_token: chiSum / t,
    mismatch_chi2_seq: seqChi / r,
    mismatch_ppl_ratio: rows ? ppl / r : 1,
    mismatch_hist: hist,
  };
}

export function decodeMismatch(words: ArrayLike<number>): MismatchStats {
  const out = {} as Record<string, number | number[]>;
  MISMATCH_FIELDS.forEach((name, i) => (out[name] = words[i]!));
  out.mismatch_hist = Array.from({ length: HIST_BINS }, (_, b) => words[MISMATCH_FIELDS.length + b]!);
  return out as unknown as MismatchStats;
}

export const MISMATCH_WORKGROUP_SIZE = 256;

export const MISMATCH_UNIFORM = uniformLayout('MismatchStats', [['numTraj', 'u32'], ['tp', 'u32'], ['histLo', 'f32'], ['histScale', 'f32']] as const);

export interface MismatchConfig {
  numTraj: number;
  tp: number;
}

/**
 * mismatchStatsCpu on the GPU, one workgroup, once per update: buffers mask, logpOld, logpRollout
 * [numTraj * tp] and out [MISMATCH_WORDS]. Like negOutShare, a single workgroup reads every row (3
 * words each), next to the update's many passes over them.
 */
export const mismatchStatsKernel = defineKernel({
  label: 'mismatchStats',
  wgsl: mismatchStatsWGSL,
  workgroupSize: MISMATCH_WORKGROUP_SIZE,
  bindings: ['mask', 'logpOld', 'logpRollout', 'out'],
  uniform: MISMATCH_UNIFORM,
  values: (c: MismatchConfig) => ({
    numTraj: c.numTraj,
    tp: c.tp,
    histLo: LOGRATIO_HIST_RANGE[0],
    histScale: Math.fround(HIST_BINS / (LOGRATIO_HIST_RANGE[1] - LOGRATIO_HIST_RANGE[0])),
  }),
  workgroups: () => 1,
});
