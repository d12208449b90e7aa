/**
 * stats.wgsl vs statsCpu (kernels/stats.ts). Token counts and histogram bins must match exactly
 * (u32 atomics; histBin rounds like the GPU). Means and the ESS: rtol 1e-5, atol 1e-6, as f32 tree
 * sums over up to ~1000 rows differ from float64 sums by a few ulps of the total; ratio min/max
 * are one f32 exp of a log-ratio up to 20 (rtol 1e-5).
 */
import { describe, expect, it } from 'vitest';
import { makeStatsInput, statsPacked } from '../../kernels/selftest/stats';
import { decodeStats, STATS_FIELDS, STATS_WORDS, statsCpu, statsKernel, type StatsInput } from '../../kernels/stats';
import { expectClose, expectEqualArrays } from '../helpers/expectClose';
import { GpuScratch, runCalls, withValidation } from '../helpers/gpuBuffers';
import { requireGpu } from '../helpers/requireGpu';

async function check(s: StatsInput, name: string) {
  const device = await requireGpu();
  const N = s.rewards.length;
  const ref = statsCpu(s);
  const words = await withValidation(device, async () => {
    const g = new GpuScratch(device);
    const kernel = statsKernel.create(device);
    const packed = statsPacked(s);
    const out = g.empty(STATS_WORDS);
    const call = kernel.bind(
      {
        mask: g.upload(s.mask), adv: g.upload(s.adv), logp: g.upload(s.logp), logpOld: g.upload(s.logpOld),
        entropy: g.upload(s.entropy), ppo: g.upload(packed.ppo), traj: g.upload(packed.traj), out,
      },
      { numTraj: N, tp: s.Tp, minibatches: s.minibatches },
    );
    runCalls(device, [[kernel, call]]);
    const res = await g.readF32(out, STATS_WORDS);
    g.destroy();
    kernel.destroy();
    return res;
  });
  const got = decodeStats(words);
  expect(got.tokens, `${name} tokens`).toBe(ref.tokens);
  expectEqualArrays(got.adv_hist, ref.adv_hist, `${name} adv_hist`);
  expectEqualArrays(got.ratio_hist, ref.ratio_hist, `${name} ratio_hist`);
  const scalars = STATS_FIELDS.filter((f) => f !== 'tokens');
  expectClose(
    scalars.map((f) => got[f]),
    scalars.map((f) => ref[f]),
    { atol: 1e-6, rtol: 1e-5, label: `stats ${name} (${scalars.length} scalars)` },
  );
  return { got, ref };
}

describe('stats.wgsl matches statsCpu', () => {
  // Rows N * Tp at 1, 255, 256, 257, 123 and 1152 (the kernel runs one 256-thread workgroup).
  const cases: Array<[number, number, number]> = [
    [1, 1, 1],
    [15, 5, 17],
    [32, 4, 8],
    [257, 1, 1],
    [41, 41, 3],
    [128, 8, 9],
  ];
  for (const [N, G, Tp] of cases) {
    it(`rows = ${N * Tp} (N ${N}, group ${G}, Tp ${Tp})`, async () => {
      await check(makeStatsInput(N, G, Tp, N * Tp), `R=${N * Tp}`);
      await check(makeStatsInput(N, G, Tp, N * Tp + 1, { rewards: 'binary' }), `R=${N * Tp} binary`);
    });
  }
  it('empty mask: no tokens, ratio stats default to 1', async () => {
    const { got } = await check(makeStatsInput(16, 4, 5, 3, { maskP: 0 }), 'empty mask');
    expect(got.tokens).toBe(0);
    expect(got.ratio_mean).toBe(1);
  });
  it('all-equal rewards in every group, and group size 1', async () => {
    const { got } = await check(makeStatsInput(24, 6, 3, 4, { rewards: 'equal' }), 'all equal');
    expect(got.groups_all_equal_frac).toBe(1);
    await check(makeStatsInput(24, 1, 3, 5), 'group 1');
  });
  it('variable group sizes with padding rows (DARS), which count neither as groups nor in the ESS', async () => {
    const { got, ref } = await check(makeStatsInput(40, 8, 4, 8, { sizes: [8, 11, 1, 16], rewards: 'binary' }), 'variable groups');
    expect(got.groups_all_equal_frac).toBeCloseTo(ref.groups_all_equal_frac, 6);
    await check(makeStatsInput(12, 4, 4, 9, { sizes: [3, 3], rewards: 'equal' }), 'half padding');
  });
  it('values on histogram edges and log-ratios past the +-20 clamp', async () => {
    await check(makeStatsInput(64, 8, 6, 6, { edges: true }), 'edges');
    await check(makeStatsInput(40, 4, 6, 7, { spread: 30 }), 'past clamp');
  });
});
