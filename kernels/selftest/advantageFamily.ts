/**
 * Self-tests of the advantage stage's other kernels (from tests/gpu/advantageFamily.gpu.test.ts and
 * tests/gpu/essScale.gpu.test.ts): trajStats.wgsl vs trajStatsCpu, tokenBaseline.wgsl vs
 * tokenBaselineCpu (OTB), whiten.wgsl vs whitenCpu and adam.wgsl essScale vs essScaleCpu.
 * Tolerances (GPU f32 against a float64 reference on the same f32 inputs):
 * - trajStats: len is a count (exact), and an empty trajectory's statistics are exactly 0. entMean,
 *   logIS and g2 are in-order f32 sums of <= tp terms, each within 1-2 ulps (exp in g2):
 *   atol = 1e-6 tp x the largest |term| (1 for entMean, 20 for the clamped log IS, 2 for g2), rtol 1e-5.
 * - tokenBaseline: the proxy w = 1 - 2 pi + sum pi^2 cancels terms of order 1 down to w >= 0.01
 *   here, so w carries up to ~2.5e-5 relative error and the baseline that much of the group's
 *   reward spread: |err| <= 1e-4 (s + |ref|), s = the largest |ref| in the group (compared as
 *   A / s, as kernels/selftest/advantage.ts does). Masked rows and equal-reward groups exactly 0.
 * - whiten (block moments, their combination, then every row): the mean is kept as an input value plus a
 *   small offset, so every rounding is of the size of A - mean: atol = 1e-5 max(1, max|A - mean| / sd),
 *   rtol 1e-5; unmasked rows (and every row when at most one is masked in) exactly 0.
 * - essScale: the ESS is a ratio of f32 tree sums of exp over up to ~1000 trajectories (a few ulps
 *   each) and one exp/log pair, the sqrt halves the relative error: atol 1e-7, rtol 2e-5.
 */
import { packTrajIn } from '../advantage/advantage';
import { essScaleCpu, essScaleKernel, type EssScaleOptions } from '../optimizer/essScale';
import { tokenBaselineCpu, tokenBaselineKernel, tokenBaselineRowsKernel, tokenBaselineWKernel } from '../advantage/tokenBaseline';
import { packTrajStats, TRAJ_STATS_WORDS, trajStatsCpu, trajStatsKernel, unpackTrajStats, type TrajStats } from '../stats/trajStats';
import {
  whitenApplyKernel,
  whitenCombineKernel,
  whitenCpu,
  whitenKernel,
  whitenPartialKernel,
  whitenScratchWords,
  whitenStats,
  WHITEN_MIN_BLOCK,
} from '../advantage/whiten';
import { createRng } from '../rng';
import { GROUPS_130, GROUPS_67, groupedRollout, groupScales, rolloutRows, type GroupSpec } from './fixtures';
import { dispatch, exact, joined, withScratch, type Check, type SelfTestCase } from './harness';

// ---- trajStats ----

/** atol 1e-6 tp x the largest |term| of the sum (`what` says where that bound comes from). */
const sumTol = (tp: number, term: number, what: string) => ({
  atol: 1e-6 * tp * term,
  rtol: 1e-5,
  why: `in-order f32 sum of ≤ tp terms, each within 1–2 ulps: atol 1e-6 tp × ${term} (${what}), rtol 1e-5`,
});

function trajStatsCase(name: string, N: number, tp: number): SelfTestCase {
  return {
    kernel: trajStatsKernel,
    name,
    run: (device) =>
      withScratch(device, async (s) => {
        const inp = rolloutRows(createRng(N * 31 + tp), N, tp, 4);
        const ref = trajStatsCpu(inp, tp);
        const k = s.kernel(trajStatsKernel.create(device));
        const out = s.empty(N * TRAJ_STATS_WORDS);
        const call = k.bind(
          {
            mask: s.upload(inp.mask), logpOld: s.upload(inp.logpOld), logpRollout: s.upload(inp.logpRollout),
            entropyOld: s.upload(inp.entropyOld), sumP2Old: s.upload(inp.sumP2Old), out,
          },
          { numTraj: N, tp },
        );
        dispatch(device, [[k, call]]);
        const got = unpackTrajStats(await s.readF32(out, N * TRAJ_STATS_WORDS), N);
        const empty: number[] = [];
        for (let n = 0; n < N; n++) if (ref.len[n] === 0) empty.push(got.entMean[n]!, got.logIS[n]!, got.g2[n]!);
        return [
          {
            output: 'len; stats of empty = 0',
            actual: joined(got.len, empty),
            expected: joined(ref.len, empty.map(() => 0)),
            tol: exact('a masked-token count, and an empty trajectory has no statistics'),
          },
          { output: 'entMean', actual: got.entMean, expected: ref.entMean, tol: sumTol(tp, 1, 'terms of order 1') },
          { output: 'logIS', actual: got.logIS, expected: ref.logIS, tol: sumTol(tp, 20, 'terms clamped to ±20') },
          { output: 'g2', actual: got.g2, expected: ref.g2, tol: sumTol(tp, 2, 'terms ≤ 2, each with an f32 exp') },
        ];
      }),
  };
}

// ---- tokenBaseline ----

function tokenBaselineCase(name: string, seed: number, sizes: GroupSpec[], tp: number, zeroTail = false): SelfTestCase {
  return {
    kernel: tokenBaselineRowsKernel,
    uses: [tokenBaselineWKernel],
    name,
    run: (device) =>
      withScratch(device, async (s) => {
        const c = groupedRollout(seed, sizes, tp);
        const ref = tokenBaselineCpu(c, tp, zeroTail);
        const R = c.N * tp;
        const k = s.kernel(tokenBaselineKernel.create(device));
        const adv = s.empty(R);
        const trajIn = s.upload(packTrajIn({ ...c, turns: new Uint32Array(c.N) }));
        const wpos = s.empty(R);
        const call = k.bind({ trajIn, mask: s.upload(c.mask), logpOld: s.upload(c.logpOld), sumP2Old: s.upload(c.sumP2Old), wpos, adv }, { numTraj: c.N, tp, zeroTail });
        dispatch(device, [[k, call]]);
        const got = await s.readF32(adv, R);
        const sc = groupScales(ref, c.groupSize, tp);
        const zeros: number[] = [];
        for (let i = 0; i < R; i++) if (ref[i] === 0 && (c.mask[i] === 0 || sc[i]! <= 1e-7)) zeros.push(got[i]!);
        return [
          {
            output: 'A / group max|A|',
            actual: Float64Array.from(got, (x, i) => x / sc[i]!),
            expected: Float64Array.from(ref, (x, i) => x / sc[i]!),
            tol: {
              atol: 1e-4,
              rtol: 1e-4,
              why: 'compared as A / s, s = the largest |A| in the group: w = 1 − 2π + Σπ² cancels to ≥ 0.01, ~2.5e-5 relative error in the baseline',
            },
          },
          {
            output: 'A = 0 (masked, equal rewards)',
            actual: zeros,
            expected: zeros.map(() => 0),
            tol: exact('the baseline is taken around the row’s own return, so equal returns give exactly 0'),
          },
        ];
      }),
  };
}

// ---- whiten ----

/** Whitened rows `got` of `adv` against whitenCpu: the masked-in rows within tolerance, the others exactly 0. */
export function whitenChecks(got: Float32Array, adv: Float32Array, mask: Float32Array): Check[] {
  const R = adv.length;
  const ref = whitenCpu(adv, mask);
  const { count, sd, maxDev } = whitenStats(adv, mask);
  const live: number[] = [];
  const dead: number[] = [];
  for (let i = 0; i < R; i++) (mask[i] !== 0 && count > 1 ? live : dead).push(i);
  const checks: Check[] = [];
  if (live.length) {
    checks.push({
      output: 'A (masked-in rows)',
      actual: live.map((i) => got[i]!),
      expected: live.map((i) => ref[i]!),
      tol: {
        atol: 1e-5 * Math.max(1, maxDev / sd),
        rtol: 1e-5,
        why: 'the mean is kept as an input value plus a small offset, so each rounding is of the size of A − mean: atol 1e-5 max(1, max|A − mean| / sd), rtol 1e-5',
      },
    });
  }
  if (dead.length) {
    checks.push({
      output: count > 1 ? 'A = 0 (masked-out rows)' : 'A = 0 (≤ 1 row masked in)',
      actual: dead.map((i) => got[i]!),
      expected: dead.map(() => 0),
      tol: exact('masked-out rows are zeroed, and with at most one masked-in row A − mean is exactly 0'),
    });
  }
  return checks;
}

function whitenCase(name: string, input: () => { adv: Float32Array; mask: Float32Array }): SelfTestCase {
  return {
    // Listed under pass 1's pipeline; whitenCombine and whitenApply are compiled and checked with it.
    kernel: whitenPartialKernel,
    uses: [whitenCombineKernel, whitenApplyKernel],
    name,
    run: (device) =>
      withScratch(device, async (s) => {
        const { adv, mask } = input();
        const R = adv.length;
        const k = s.kernel(whitenKernel.create(device));
        const buf = s.upload(adv);
        const partials = s.empty(whitenScratchWords(R));
        dispatch(device, [[k, k.bind({ mask: s.upload(mask), adv: buf, partials }, { numRows: R })]]);
        return whitenChecks(await s.readF32(buf, R), adv, mask);
      }),
  };
}

/** The GPU test's seeded rows: scale N(0, 1) + offset, 80% masked in. */
const whitenRows = (R: number, scale: number, offset: number) => () => {
  const rng = createRng(R + scale);
  const adv = Float32Array.from({ length: R }, () => scale * rng.normal() + offset);
  const mask = Float32Array.from({ length: R }, () => (rng.next() < 0.8 ? 1 : 0));
  return { adv, mask };
};

// ---- essScale ----

function statsOf(logIS: number[], len?: number[]): TrajStats {
  const N = logIS.length;
  return { len: Float32Array.from(len ?? logIS.map(() => 3)), entMean: new Float32Array(N), logIS: Float32Array.from(logIS), g2: new Float32Array(N) };
}

const SQRT: EssScaleOptions = { enabled: true, rule: 'sqrt', rhoBase: 1 };

/** Runs the kernel once per input and compares [ESS / N, lr factor] of all of them as one output. */
function essScaleCase(name: string, runs: () => Array<[TrajStats, EssScaleOptions]>): SelfTestCase {
  return {
    kernel: essScaleKernel,
    name,
    run: (device) =>
      withScratch(device, async (s) => {
        const k = s.kernel(essScaleKernel.create(device));
        const actual: number[] = [];
        const expected: number[] = [];
        for (const [stats, o] of runs()) {
          const out = s.empty(2);
          dispatch(device, [[k, k.bind({ stats: s.upload(packTrajStats(stats)), out }, { ...o, numTraj: stats.len.length })]]);
          actual.push(...(await s.readF32(out, 2)));
          expected.push(...essScaleCpu(stats, o));
        }
        return [
          {
            output: 'ESS / N, lr factor',
            actual,
            expected,
            tol: { atol: 1e-7, rtol: 2e-5, why: 'a ratio of f32 tree sums of exp (a few ulps each) and one exp/log pair; the sqrt halves it' },
          },
        ];
      }),
  };
}

/** The GPU test's draws for N: N log-weights N(0, 4) (sqrt rule), then N of N(0, 1) (linear rule). */
function staleWeights(N: number): [number[], number[]] {
  const rng = createRng(N);
  const a = Array.from({ length: N }, () => rng.normal() * 2);
  return [a, Array.from({ length: N }, () => rng.normal())];
}

export const advantageFamilyCases: SelfTestCase[] = [
  trajStatsCase('N 1, tp 1', 1, 1),
  trajStatsCase('N 65, tp 3: every 4th trajectory empty', 65, 3),
  trajStatsCase('N 130, tp 12: log IS past ±20', 130, 12),

  tokenBaselineCase('N 64: 16 groups of 4, tp 6', 5, new Array<number>(16).fill(4), 6),
  tokenBaselineCase('N 67: groups of 1 to 16 and 3 padding rows, tp 9', 6, GROUPS_67, 9),
  tokenBaselineCase('N 130: variable groups, 2 padding rows, tp 13', 7, GROUPS_130, 13),
  tokenBaselineCase('N 130, zero tail (verl\'s multi-turn default)', 7, GROUPS_130, 13, true),

  whitenCase(`rows ${WHITEN_MIN_BLOCK + 1}: 2 blocks`, whitenRows(WHITEN_MIN_BLOCK + 1, 1, 0)),
  whitenCase('rows 5000, values 2 N(0, 1) + 0.5', whitenRows(5000, 2, 0.5)),
  whitenCase('rows 5000, values 0.25 N(0, 1) + 1e6', whitenRows(5000, 0.25, 1e6)),
  whitenCase('rows 1000, values 1e4 N(0, 1) + 1e3', whitenRows(1000, 1e4, 1e3)),
  whitenCase('rows 777, values N(0, 1) + 100', whitenRows(777, 1, 100)),
  whitenCase('no row masked in', () => ({ adv: Float32Array.of(1, 2, 3), mask: new Float32Array(3) })),
  whitenCase('one row masked in', () => ({ adv: Float32Array.of(1, 2, 3), mask: Float32Array.of(0, 1, 0) })),
  whitenCase('300 equal values', () => ({ adv: new Float32Array(300).fill(0.1), mask: new Float32Array(300).fill(1) })),

  essScaleCase('N 257, random stale log-weights, sqrt rule', () => [[statsOf(staleWeights(257)[0]), SQRT]]),
  essScaleCase('N 1000, linear rule, rhoBase 0.5', () => [[statsOf(staleWeights(1000)[1]), { enabled: true, rule: 'linear', rhoBase: 0.5 }]]),
  essScaleCase('equal weights; one dominant weight of ±1000', () => [
    [statsOf([0.3, 0.3, 0.3, 0.3]), SQRT],
    [statsOf([1000, -1000, -1000, -1000]), SQRT],
  ]),
  essScaleCase('padding rows (len 0), no live row, disabled', () => [
    [statsOf([0, 5, 0, -2], [2, 0, 1, 0]), SQRT],
    [statsOf([1, 2], [0, 0]), SQRT],
    [statsOf([4, 0, 0]), { enabled: false, rule: 'sqrt', rhoBase: 1 }],
  ]),
];
