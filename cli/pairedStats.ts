/**
 * Paired differences over seeds, as a paper would report an effect: the method and its baseline run
 * on the same seeds, d_i = method_i - baseline_i, and a 95 % interval of the mean difference,
 * either Student's t (the default: honest at 8 seeds, where a percentile bootstrap is too narrow)
 * or a percentile bootstrap with a fixed seed (the same interval on every run of the sweep).
 */
import { createRng } from '../workers/core/rng';

export const INTERVALS = ['t', 'bootstrap'] as const;
export type IntervalKind = (typeof INTERVALS)[number];

export interface PairedDiff {
  /** Seeds paired. */
  n: number;
  /** Mean of method - baseline. */
  mean: number;
  /** The 95 % interval of the mean difference. */
  lo: number;
  hi: number;
}

/** Two-sided 97.5 % quantiles of Student's t for 1..30 degrees of freedom. */
const T975 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069,
  2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];

export function t975(df: number): number {
  if (!Number.isInteger(df) || df < 1) throw new Error(`t quantile: degrees of freedom must be a positive integer, got ${df}`);
  return df <= T975.length ? T975[df - 1]! : 1.96 + 2.4 / df;
}

/** The bootstrap's generator seed: fixed, so the table is reproducible. */
export const BOOTSTRAP_SEED = 0xb0075;
export const BOOTSTRAP_RESAMPLES = 4000;

/**
 * The paired difference of `method` and `baseline` (values per seed, in the same seed order) and
 * its 95 % interval. Needs at least 2 pairs.
 */
export function pairedDiff(baseline: readonly number[], method: readonly number[], kind: IntervalKind = 't'): PairedDiff {
  if (baseline.length !== method.length) throw new Error(`paired difference: ${baseline.length} baseline values but ${method.length} method values; pair them by seed`);
  const n = baseline.length;
  if (n < 2) throw new Error(`paired difference: needs at least 2 seeds, got ${n}`);
  const d = method.map((m, i) => m - baseline[i]!);
  if (d.some((x) => !Number.isFinite(x))) throw new Error('paired difference: a value is not finite');
  const mean = d.reduce((a, b) => a + b, 0) / n;
  if (kind === 't') {
    const sd = Math.sqrt(d.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1));
    const half = t975(n - 1) * (sd / Math.sqrt(n));
    return { n, mean, lo: mean - half, hi: mean + half };
  }
  const rng = createRng(BOOTSTRAP_SEED);
  const means = new Float64Array(BOOTSTRAP_RESAMPLES);
  for (let b = 0; b < BOOTSTRAP_RESAMPLES; b++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += d[rng.int(n)]!;
    means[b] = s / n;
  }
  means.sort();
  return { n, mean, lo: means[Math.floor(0.025 * BOOTSTRAP_RESAMPLES)]!, hi: means[Math.ceil(0.975 * BOOTSTRAP_RESAMPLES) - 1]! };
}

/**
 * The verdict on a predicted direction: ✓ the interval excludes 0 on the predicted side, ✗ it
 * excludes 0 on the other side, ~ it contains 0 (no effect shown either way); `ref` for a row
 * with no predicted direction.
 */
export function verdict(d: PairedDiff, dir: -1 | 0 | 1): '✓' | '✗' | '~' | 'ref' {
  if (dir === 0) return 'ref';
  if (dir > 0 ? d.lo > 0 : d.hi < 0) return '✓';
  if (dir > 0 ? d.hi < 0 : d.lo > 0) return '✗';
  return '~';
}
