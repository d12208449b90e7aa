/**
 * Self-test of mismatchStats.wgsl against mismatchStatsCpu (from tests/gpu/mismatchStats.gpu.test.ts).
 * The kernel sums in f32, a thread's trajectories in order and then an 8-level tree; the reference
 * sums the same terms in float64. The terms near 0 are the same polynomials on both sides, and exp
 * away from 0 is within a few f32 ulps, so each mean is off by about (tokens a thread + 8) f32
 * roundings of the sum of |terms|: at most ~300 tokens a thread here, 2e-5 relative of the largest
 * mean term, which rtol 1e-4 with atol 1e-6 (for means near 0 of terms of both signs) covers. The
 * histogram counts are exact: the f32 log-ratio and its bin are the same on both.
 */
import { createRng } from '../rng';
import { HIST_BINS } from '../stats/histograms';
import { decodeMismatch, MISMATCH_FIELDS, MISMATCH_WORDS, mismatchStatsCpu, mismatchStatsKernel, type MismatchStats, type MismatchStatsInput } from '../stats/mismatchStats';
import { dispatch, exact, withScratch, type SelfTestCase, type Tolerance } from './harness';

export const MISMATCH_TOL: Tolerance = { atol: 1e-6, rtol: 1e-4, why: 'f32 sums over <= 300 tokens a thread and an 8-level tree, against float64; the same polynomials near 0' };
export const MISMATCH_HIST_TOL = exact('counts of the same f32 log-ratios in the same bins');

export interface MismatchData {
  mask: Float32Array;
  logpOld: Float32Array;
  logpRollout: Float32Array;
  Tp: number;
}

/**
 * N trajectories of Tp rows, seeded: a quarter of the rows and every eleventh trajectory masked out,
 * log-ratios in the polynomial's range (|lr| < 0.125), across the histogram's range, a few past
 * the ±20 clamp, and exact zeros.
 */
export function mismatchInputs(N: number, Tp: number, seed = N): MismatchData {
  const rng = createRng(seed * 17 + 3);
  const R = N * Tp;
  const x: MismatchData = { mask: new Float32Array(R), logpOld: new Float32Array(R), logpRollout: new Float32Array(R), Tp };
  for (let i = 0; i < R; i++) {
    const n = Math.floor(i / Tp);
    x.mask[i] = n % 11 !== 10 && rng.next() < 0.75 ? 1 : 0;
    x.logpRollout[i] = -rng.next() * 4;
    const u = rng.next();
    const lr = u < 0.1 ? 0 : u < 0.5 ? (rng.next() - 0.5) * 0.02 : u < 0.98 ? (rng.next() - 0.5) * 1.4 : (rng.next() < 0.5 ? -1 : 1) * 25;
    x.logpOld[i] = x.logpRollout[i]! + lr;
  }
  return x;
}

/** The metrics mismatchStats.wgsl writes. */
export async function gpuMismatchStats(device: GPUDevice, x: MismatchStatsInput & MismatchData): Promise<MismatchStats> {
  return withScratch(device, async (s) => {
    const k = s.kernel(mismatchStatsKernel.create(device));
    const out = s.empty(MISMATCH_WORDS);
    const call = k.bind({ mask: s.upload(x.mask), logpOld: s.upload(x.logpOld), logpRollout: s.upload(x.logpRollout), out }, { numTraj: x.mask.length / x.Tp, tp: x.Tp });
    dispatch(device, [[k, call]]);
    return decodeMismatch(await s.readF32(out, MISMATCH_WORDS));
  });
}

const scalars = (m: MismatchStats) => MISMATCH_FIELDS.map((f) => m[f]);

function mismatchCase(name: string, inputs: () => MismatchData): SelfTestCase {
  return {
    kernel: mismatchStatsKernel,
    name,
    run: async (device) => {
      const x = inputs();
      const gpu = await gpuMismatchStats(device, x);
      const cpu = mismatchStatsCpu(x);
      return [
        { output: MISMATCH_FIELDS.join(', '), actual: scalars(gpu), expected: scalars(cpu), tol: MISMATCH_TOL },
        { output: `histogram (${HIST_BINS} bins)`, actual: gpu.mismatch_hist, expected: cpu.mismatch_hist, tol: MISMATCH_HIST_TOL },
      ];
    },
  };
}

export const mismatchStatsCases: SelfTestCase[] = [
  mismatchCase('257 trajectories of 9 rows: tiny, moderate and clamped log-ratios', () => mismatchInputs(257, 9)),
  mismatchCase('4,000 trajectories of 18 rows', () => mismatchInputs(4000, 18)),
  mismatchCase('every row masked out: zeros, ratio 1', () => {
    const x = mismatchInputs(300, 9);
    x.mask.fill(0);
    return x;
  }),
];
