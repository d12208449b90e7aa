/**
 * stats.wgsl + stats.wgsl statsCombine vs statsCpu (kernels/stats/stats.ts). Token counts and histogram bins
 * must match exactly (u32 counters in both passes; histBin rounds like the GPU). Means and the
 * ESS: rtol 1e-5, atol 1e-6, unchanged from the one-workgroup kernel: every f32 sum is a short
 * serial run per thread plus two 8-level trees and a few terms per thread in pass 2, whatever the
 * row count, so it stays within a few ulps of the total up to 73,728 rows; adv_std combines
 * per-chunk squared deviations about the chunk's own mean (Chan's formula), never a difference of
 * large sums; ratio min/max are one f32 exp of a log-ratio up to 20 (rtol 1e-5). Two runs give the
 * same bits. Both layouts of pass 2 (StatsConfig.spreadBins) are checked, and against each other
 * bit for bit; so are chunks of 512 rows (StatsConfig.chunkRows), the layout the kernel bench
 * compares with, and pass 1's histograms in copies (StatsConfig.histCopies, the hardware layout).
 */
import { describe, expect, it } from 'vitest';
import { makeStatsInput, statsPacked } from '../../kernels/selftest/stats';
import { decodeStats, STATS_FIELDS, STATS_MAX_HIST_COPIES, STATS_WORDS, statsChunks, statsCpu, statsKernel, type StatsConfig, type StatsInput } from '../../kernels/stats/stats';
import { expectClose, expectEqualArrays } from '../helpers/expectClose';
import { dispatch, Scratch } from '../../kernels/selftest/harness';
import { withValidation } from '../helpers/validation';
import { requireGpu } from '../helpers/requireGpu';

type Layout = Pick<StatsConfig, 'spreadBins' | 'chunkRows' | 'histCopies'>;

/** The output words of stats on the device. */
async function gpuStats(s: StatsInput, layout: Layout = {}): Promise<Float32Array> {
  const device = await requireGpu();
  const config = { numTraj: s.rewards.length, tp: s.Tp, minibatches: s.minibatches, ...layout };
  return withValidation(device, async () => {
    const g = new Scratch(device);
    const kernel = statsKernel.create(device);
    const packed = statsPacked(s);
    const out = g.empty(STATS_WORDS);
    const call = kernel.bind(
      {
        mask: g.upload(s.mask), adv: g.upload(s.adv), logp: g.upload(s.logp), logpOld: g.upload(s.logpOld),
        entropy: g.upload(s.entropy), ppo: g.upload(packed.ppo), traj: g.upload(packed.traj),
        partials: g.empty(statsKernel.scratchWords(config)), out,
      },
      config,
    );
    dispatch(device, [[kernel, call]]);
    const res = await g.readF32(out, STATS_WORDS);
    g.destroy();
    kernel.destroy();
    return res;
  });
}

async function checkLayout(s: StatsInput, name: string, layout: Layout) {
  const ref = statsCpu(s);
  const got = decodeStats(await gpuStats(s, layout));
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

// Both layouts of pass 2: the bins in its one workgroup, or spread over workgroups of their own.
const HARDWARE: Layout = { spreadBins: true, histCopies: STATS_MAX_HIST_COPIES };
for (const [title, layout] of [
  ['', {}],
  [' (bins spread over workgroups)', { spreadBins: true }],
  [' (the hardware layout: bins spread, histograms in copies)', HARDWARE],
] as Array<[string, Layout]>) describe(`stats.wgsl matches statsCpu${title}`, () => {
  const check = (s: StatsInput, name: string) => checkLayout(s, name, layout);
  // Rows N * Tp at 1, 255, 256, 257, 123 and 1152: one chunk, chunk and workgroup edges (N 257
  // with Tp 1 is a chunk of 256 trajectories and one of 1), and one chunk of 1,152 rows, past the
  // 1,024 log-ratios that fit in treeA.
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

const LAYOUTS: Array<[string, Layout]> = [
  ['', {}],
  [', bins spread over workgroups', { spreadBins: true }],
  [', chunks of 512 rows', { chunkRows: 512 }],
  [', the hardware layout', HARDWARE],
];
for (const [title, layout] of LAYOUTS) describe(`stats over many chunks (pass 1 per chunk of whole trajectories, pass 2 combines them${title})`, () => {
  const check = (s: StatsInput, name: string) => checkLayout(s, name, layout);
  // [N, group, Tp]: the 8x and 64x batches (5 and 37 chunks), one trajectory per thread of a chunk
  // (Tp 1: 256 per chunk, the last one short), trajectories longer than a chunk's row target (3 a
  // chunk; one a chunk at 512 rows), and longer than the 2,048 log-ratios pass 1 keeps in workgroup
  // memory (the rest read again from global memory).
  const cases: Array<[number, number, number]> = [
    [1024, 8, 9],
    [8192, 8, 9],
    [1000, 8, 1],
    [6, 3, 600],
    [3, 1, 2500],
  ];
  for (const [N, G, Tp] of cases) {
    const { trajPerChunk, chunks } = statsChunks(N, Tp, layout.chunkRows);
    it(`rows = ${N * Tp} (N ${N}, group ${G}, Tp ${Tp}): ${chunks} chunks of ${trajPerChunk} trajectories`, async () => {
      await check(makeStatsInput(N, G, Tp, N + Tp), `R=${N * Tp}`);
      await check(makeStatsInput(N, G, Tp, N + Tp + 1, { rewards: 'binary', spread: 2 }), `R=${N * Tp} binary, wide log-ratios`);
    });
  }
  it('no trajectories: pass 1 has nothing to do, pass 2 writes the empty statistics', async () => {
    const { got } = await check(makeStatsInput(0, 8, 9, 5), 'N=0');
    expect(got.tokens).toBe(0);
    expect(got.ess).toBe(1);
  });
  it('chunks without tokens or live trajectories among full ones (padding rows at the end)', async () => {
    // 600 trajectories of Tp 4: chunks of 256 (128 at 512 rows); the last 200 are padding (no
    // turns, no mask), the whole of the last chunk.
    const x = makeStatsInput(600, 8, 4, 41, { sizes: Array.from({ length: 50 }, () => 8) });
    for (let i = 400 * 4; i < x.mask.length; i++) x.mask[i] = 0;
    await check(x, 'padding chunks');
  });
  it('two runs give the same bits', async () => {
    const x = makeStatsInput(8192, 8, 9, 99);
    expect(Array.from(await gpuStats(x, layout))).toEqual(Array.from(await gpuStats(x, layout)));
  });
});

describe('stats: spreading the bins over workgroups, or the histograms over copies, changes no bit', () => {
  // Up to 65,536 trajectories of group 64 (289 chunks: some bin workgroup threads take two), with
  // histogram edges, empty masks and one chunk.
  const cases: Array<[number, number, number, Parameters<typeof makeStatsInput>[4]]> = [
    [1, 1, 1, {}],
    [16, 4, 5, { maskP: 0 }],
    [64, 8, 6, { edges: true }],
    [8192, 8, 9, { rewards: 'binary', spread: 2 }],
    [65536, 64, 9, {}],
  ];
  for (const [N, G, Tp, o] of cases) {
    it(`N ${N}, group ${G}, Tp ${Tp}: ${statsChunks(N, Tp).chunks} chunks`, async () => {
      const x = makeStatsInput(N, G, Tp, N + G, o);
      const bits = async (layout: Layout) => Array.from(new Uint32Array((await gpuStats(x, layout)).buffer));
      const one = await bits({});
      for (const layout of [{ spreadBins: true }, { histCopies: 3 }, HARDWARE]) expectEqualArrays(await bits(layout), one, `${JSON.stringify(layout)}: output bits`);
    });
  }

  it('refuses a number of histogram copies it has no room for, naming it', async () => {
    const x = makeStatsInput(4, 2, 3, 1);
    await expect(gpuStats(x, { histCopies: STATS_MAX_HIST_COPIES + 1 })).rejects.toThrow(/stats: 17 histogram copies is outside 1\.\.16/);
    await expect(gpuStats(x, { histCopies: 0 })).rejects.toThrow(/stats: 0 histogram copies is outside 1\.\.16/);
  });
});
