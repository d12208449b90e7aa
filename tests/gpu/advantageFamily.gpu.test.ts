/**
 * The advantage stage's other kernels against their references: trajStats.wgsl (trajStatsCpu),
 * tokenBaseline.wgsl (tokenBaselineCpu, OTB), whiten (its three dispatches, whitenCpu), and
 * trajStats' output buffer bound straight into advantage.wgsl (the struct layouts agree). The file
 * compiles them with compileKernels first, so a WGSL error names the kernel.
 *
 * Tolerances (GPU f32 vs float64 reference on the same f32 inputs):
 * - trajStats: len is a count (exact). entMean, logIS and g2 are in-order f32 sums of <= tp terms,
 *   each term within 1-2 ulps (exp in g2): atol = 1e-6 tp x (largest |term|: 20 for the clamped
 *   log IS, 2 for g2, 1 for entMean), rtol 1e-5.
 * - tokenBaselineW (OTB's pass 1): W_{n,p} is an in-order f32 sum of p + 1 <= tp terms w, each
 *   within a few ulps of 2 (1 - 2 pi + sum pi^2 with an f32 exp): atol = rtol = 1e-6 tp. Positions
 *   past a trajectory's last masked row are exactly NO_POSITION.
 * - tokenBaseline: A = -sum W (R_m - R_n) / (sum W + 1e-8). The proxy w = 1 - 2 pi + sum pi^2
 *   cancels terms of order 1 down to w >= (1 - pi)^2 >= 0.01 here (pi <= 0.9), so w carries up to
 *   ~2.5e-5 relative error, and the baseline that much of the group's reward spread:
 *   |err| <= 1e-4 (s + |ref|), s = the largest |ref| in the group. Equal-reward groups exactly 0.
 * - whiten: the kernel keeps the mean as one of the inputs (a pivot) plus a small offset, and every
 *   difference it rounds (A - pivot, pivot - pivot, the offsets in Chan's merges) is of the size of
 *   the deviations, so its error is tens of ulps of max|A - mean| / sd at most, whatever the common
 *   offset: atol = 1e-5 max(1, max|A - mean| / sd), rtol 1e-5 (the sd's relative error). Tighter
 *   than the max|A| / sd a kernel with one f32 mean needs: at 1e6 + N(0, 1) even the correctly
 *   rounded f32 mean is off by 1.1e-3 after whitening, 25x this atol. Masked-out rows, every row
 *   when at most one is masked in, and equal values: exactly 0.
 */
import { describe, expect, it } from 'vitest';
import { ADVANTAGE_DEFAULTS, advantageCpu, advantageKernel, packTrajIn, packTurnIn } from '../../kernels/advantage/advantage';
import { compileKernels } from '../../kernels/pipeline';
import { NO_POSITION, tokenBaselineCpu, tokenBaselineKernel, tokenBaselineWCpu, tokenBaselineWKernel } from '../../kernels/advantage/tokenBaseline';
import { TRAJ_STATS_WORDS, trajStatsCpu, trajStatsKernel, unpackTrajStats } from '../../kernels/stats/trajStats';
import {
  whitenApplyKernel,
  whitenBlocks,
  whitenCombineKernel,
  whitenCpu,
  whitenKernel,
  whitenPartialKernel,
  whitenScratchWords,
  whitenStats,
  WHITEN_MAX_BLOCKS,
  WHITEN_MIN_BLOCK,
  WHITEN_WORKGROUP_SIZE,
} from '../../kernels/advantage/whiten';
import { createRng } from '../../workers/core/rng';
import { expectClose } from '../helpers/expectClose';
import { dispatch, Scratch } from '../../kernels/selftest/harness';
import { withValidation } from '../helpers/validation';
import { requireGpu } from '../helpers/requireGpu';
import { groupedRollout, rolloutRows } from '../../kernels/selftest/fixtures';

async function device(): Promise<GPUDevice> {
  const d = await requireGpu();
  await compileKernels(d, [trajStatsKernel, ...tokenBaselineKernel.kernels, whitenPartialKernel, whitenCombineKernel, whitenApplyKernel]);
  return d;
}

describe('trajStats.wgsl matches trajStatsCpu', () => {
  const cases: Array<[number, number]> = [[1, 1], [63, 5], [64, 7], [65, 3], [130, 12]];
  for (const [N, tp] of cases) {
    it(`N = ${N}, tp = ${tp} (every 4th trajectory empty)`, async () => {
      const d = await device();
      const inp = rolloutRows(createRng(N * 31 + tp), N, tp, 4);
      const ref = trajStatsCpu(inp, tp);
      const got = await withValidation(d, async () => {
        const g = new Scratch(d);
        const k = trajStatsKernel.create(d);
        const out = g.empty(N * TRAJ_STATS_WORDS);
        const call = k.bind(
          {
            mask: g.upload(inp.mask), logpOld: g.upload(inp.logpOld), logpRollout: g.upload(inp.logpRollout),
            entropyOld: g.upload(inp.entropyOld), sumP2Old: g.upload(inp.sumP2Old), out,
          },
          { numTraj: N, tp },
        );
        dispatch(d, [[k, call]]);
        const res = unpackTrajStats(await g.readF32(out, N * TRAJ_STATS_WORDS), N);
        g.destroy();
        k.destroy();
        return res;
      });
      expect(Array.from(got.len)).toEqual(Array.from(ref.len));
      expectClose(got.entMean, ref.entMean, { atol: 1e-6 * tp, rtol: 1e-5, label: `trajStats entMean N=${N} tp=${tp}` });
      expectClose(got.logIS, ref.logIS, { atol: 2e-5 * tp, rtol: 1e-5, label: `trajStats logIS N=${N} tp=${tp}` });
      expectClose(got.g2, ref.g2, { atol: 2e-6 * tp, rtol: 1e-5, label: `trajStats g2 N=${N} tp=${tp}` });
      for (let n = 0; n < N; n++) if (ref.len[n] === 0) expect([got.entMean[n], got.logIS[n], got.g2[n]]).toEqual([0, 0, 0]);
    });
  }
});

function maxPerGroup(ref: Float32Array, groupSize: Uint32Array, tp: number): Float64Array {
  const s = new Float64Array(ref.length);
  for (let n = 0; n < groupSize.length; ) {
    const G = groupSize[n]!;
    let m = 0;
    for (let i = n * tp; i < (n + G) * tp; i++) m = Math.max(m, Math.abs(ref[i]!));
    s.fill(m + 1e-7, n * tp, (n + G) * tp);
    n += G;
  }
  return s;
}

describe('tokenBaseline.wgsl matches tokenBaselineCpu (OTB)', () => {
  const cases: Array<[string, number, Array<number | 'pad'>, number]> = [
    ['N=64 uniform', 5, new Array<number>(16).fill(4), 6],
    ['N=67 variable', 6, [5, 'pad', 3, 8, 2, 'pad', 16, 1, 4, 7, 'pad', 6, 12, 1], 9],
    ['N=130 variable', 7, [9, 9, 3, 'pad', 'pad', 16, 2, 2, 11, 8, 8, 8, 5, 16, 4, 4, 6, 7], 13],
  ];
  for (const [name0, seed, sizes, tp] of cases) for (const zeroTail of [false, true]) {
    const name = `${name0}${zeroTail ? ', zero tail' : ''}`;
    it(name, async () => {
      const d = await device();
      const c = groupedRollout(seed, sizes, tp);
      const ref = tokenBaselineCpu(c, tp, zeroTail);
      const R = c.N * tp;
      const got = await withValidation(d, async () => {
        const g = new Scratch(d);
        const k = tokenBaselineKernel.create(d);
        const adv = g.empty(R);
        const trajIn = g.upload(packTrajIn({ ...c, turns: new Uint32Array(c.N) }));
        const call = k.bind(
          { trajIn, mask: g.upload(c.mask), logpOld: g.upload(c.logpOld), sumP2Old: g.upload(c.sumP2Old), wpos: g.empty(R), adv },
          { numTraj: c.N, tp, zeroTail },
        );
        dispatch(d, [[k, call]]);
        const res = await g.readF32(adv, R);
        g.destroy();
        k.destroy();
        return res;
      });
      const s = maxPerGroup(ref, c.groupSize, tp);
      let worst = 0;
      for (let i = 0; i < R; i++) {
        const e = Math.abs(got[i]! - ref[i]!) / (s[i]! + Math.abs(ref[i]!));
        expect(e <= 1e-4, `row ${i}: got ${got[i]}, expected ${ref[i]}`).toBe(true);
        if (ref[i] === 0 && (c.mask[i] === 0 || s[i]! <= 1e-7)) expect(got[i], `row ${i} exactly +0`).toBe(0);
        worst = Math.max(worst, e);
      }
      console.info(`[close] tokenBaseline ${name}: max |err| / (group max + |ref|) ${worst.toExponential(2)}`);
    });
  }
});

describe('tokenBaseline.wgsl tokenBaselineW (OTB pass 1) matches tokenBaselineWCpu', () => {
  const cases: Array<[string, number, Array<number | 'pad'>, number]> = [
    ['N=67 variable, tp 9', 6, [5, 'pad', 3, 8, 2, 'pad', 16, 1, 4, 7, 'pad', 6, 12, 1], 9],
    ['N=130 variable, tp 13', 7, [9, 9, 3, 'pad', 'pad', 16, 2, 2, 11, 8, 8, 8, 5, 16, 4, 4, 6, 7], 13],
    ['N=40, tp 1', 8, new Array<number>(10).fill(4), 1],
  ];
  for (const [name, seed, sizes, tp] of cases) {
    it(name, async () => {
      const d = await device();
      const c = groupedRollout(seed, sizes, tp);
      const ref = tokenBaselineWCpu(c, c.N, tp);
      const R = c.N * tp;
      const got = await withValidation(d, async () => {
        const g = new Scratch(d);
        const k = tokenBaselineWKernel.create(d);
        const wpos = g.upload(new Float32Array(R).fill(7));
        dispatch(d, [[k, k.bind({ mask: g.upload(c.mask), logpOld: g.upload(c.logpOld), sumP2Old: g.upload(c.sumP2Old), wpos }, { numTraj: c.N, tp })]]);
        const res = await g.readF32(wpos, R);
        g.destroy();
        k.destroy();
        return res;
      });
      expect(ref.some((w) => w === NO_POSITION) && ref.some((w) => w > 0), 'the case has both kinds of entry').toBe(true);
      for (let i = 0; i < R; i++) {
        if (ref[i] === NO_POSITION) expect(got[i], `entry ${i}`).toBe(NO_POSITION);
        else expect(Math.abs(got[i]! - ref[i]!), `entry ${i}: got ${got[i]}, expected ${ref[i]}`).toBeLessThanOrEqual(1e-6 * tp * (1 + Math.abs(ref[i]!)));
      }
    });
  }
});

describe('whiten (whiten.wgsl, whiten.wgsl whitenCombine, whiten.wgsl whitenApply) matches whitenCpu', () => {
  const B = WHITEN_MIN_BLOCK;
  const grown = WHITEN_MAX_BLOCKS * B; // the last row count with blocks of B rows
  const cases: Array<[number, number, number]> = [
    // rows, scale, offset
    [1, 1, 0],
    [2, 1, 0],
    [WHITEN_WORKGROUP_SIZE + 1, 1, 0],
    [B - 1, 1, 0],
    [B, 3, 1],
    [B + 1, 1, 0],
    [1000, 1e4, 1e3],
    [5000, 2, 0.5],
    [73_728, 1, 100],
    [300_000, 2, -3],
    [grown, 1, 0],
    [grown + 1, 1, 0],
    // A large common offset with a small spread: the mean must keep its low bits (pivot + offset).
    [5000, 0.25, 1e6],
    [300_000, 1, 1e6],
  ];
  for (const [R, scale, offset] of cases) {
    const { block, blocks } = whitenBlocks(R);
    it(`rows = ${R} (${blocks} blocks of ${block}), values ${scale} N(0,1) + ${offset}`, async () => {
      const d = await device();
      const { adv, mask } = normalRows(R, scale, offset);
      await checkWhiten(d, adv, mask, `rows=${R} scale=${scale} offset=${offset}`);
    });
  }

  it('blocks: a function of the row count, at most one per thread of the tree', () => {
    expect(whitenBlocks(0)).toEqual({ block: B, blocks: 0, treeTop: 0 });
    expect(whitenBlocks(1152)).toEqual({ block: B, blocks: 1, treeTop: 0 });
    expect(whitenBlocks(B + 1)).toEqual({ block: B, blocks: 2, treeTop: 1 });
    expect(whitenBlocks(9216)).toEqual({ block: B, blocks: 5, treeTop: 4 });
    expect(whitenBlocks(73_728)).toEqual({ block: B, blocks: 36, treeTop: 32 });
    expect(whitenBlocks(grown)).toEqual({ block: B, blocks: 256, treeTop: 128 });
    expect(whitenBlocks(grown + 1)).toEqual({ block: B + WHITEN_WORKGROUP_SIZE, blocks: 228, treeTop: 128 });
  });

  it('refuses a scratch buffer smaller than whitenScratchWords', async () => {
    const d = await device();
    const g = new Scratch(d);
    const k = whitenKernel.create(d);
    const R = 3 * B;
    const buffers = { mask: g.empty(R), adv: g.empty(R) };
    expect(() => k.bind({ ...buffers, partials: g.empty(whitenScratchWords(R) - 4) }, { numRows: R })).toThrow(/whitenScratchWords/);
    const call = k.bind({ ...buffers, partials: g.empty(whitenScratchWords(B)) }, { numRows: B });
    expect(() => call.update({ numRows: R })).toThrow(/whitenScratchWords/);
    g.destroy();
    k.destroy();
  });

  it('no rows: nothing dispatched, the buffer untouched', async () => {
    const d = await device();
    const got = await runWhiten(d, Float32Array.of(7, 8, 9, 10), new Float32Array(4), 0);
    expect(Array.from(got)).toEqual([7, 8, 9, 10]);
  });

  it('no masked row, one masked row (also in a later block), all-equal values', async () => {
    const d = await device();
    await checkWhiten(d, Float32Array.from([1, 2, 3]), new Float32Array(3), 'empty');
    await checkWhiten(d, Float32Array.from([1, 2, 3]), Float32Array.from([0, 1, 0]), 'one');
    const R = 3 * B + 5;
    const one = new Float32Array(R);
    one[2 * B + 7] = 1;
    await checkWhiten(d, Float32Array.from({ length: R }, (_, i) => i - 1e3), one, `one of ${R}`);
    await checkWhiten(d, Float32Array.from({ length: R }, (_, i) => i), new Float32Array(R), `none of ${R}`);
    // Zero variance: sd = sqrt(1e-8) and A - mean exactly 0 (block means of equal values are exact).
    for (const [R, x] of [[300, 0.1], [5 * B + 3, 0.1], [300_000, -1e6 / 3]] as const) {
      const mask = Float32Array.from({ length: R }, (_, i) => (i % 7 === 3 ? 0 : 1));
      const got = await checkWhiten(d, new Float32Array(R).fill(x), mask, `equal ${x} x ${R}`);
      expect(got.every((v) => v === 0), `equal ${x} x ${R}: every row exactly 0`).toBe(true);
    }
  });

  it('deterministic: two runs give the same bits, and equal inputs in any workgroup the same output', async () => {
    const d = await device();
    const R = 300_000;
    const rng = createRng(17);
    // 33 distinct values, so every value occurs in many blocks and many workgroups of pass 2.
    const adv = Float32Array.from({ length: R }, () => 1e3 + Math.round(rng.normal() * 4) / 4);
    const mask = Float32Array.from({ length: R }, () => (rng.next() < 0.8 ? 1 : 0));
    const a = await checkWhiten(d, adv, mask, 'determinism run 1');
    const b = await runWhiten(d, adv, mask, R);
    expect(new Uint32Array(b.buffer)).toEqual(new Uint32Array(a.buffer));
    const seen = new Map<number, number>();
    for (let i = 0; i < R; i++) {
      if (mask[i] === 0) continue;
      const was = seen.get(adv[i]!);
      if (was === undefined) seen.set(adv[i]!, a[i]!);
      else if (was !== a[i]) expect(a[i], `row ${i} (input ${adv[i]}): the same mean and sd in every workgroup`).toBe(was);
    }
  });
});

/** Seeded rows: scale N(0, 1) + offset, 80% masked in. */
function normalRows(R: number, scale: number, offset: number): { adv: Float32Array; mask: Float32Array } {
  const rng = createRng(R + scale);
  const adv = Float32Array.from({ length: R }, () => scale * rng.normal() + offset);
  const mask = Float32Array.from({ length: R }, () => (rng.next() < 0.8 ? 1 : 0));
  return { adv, mask };
}

/** whitenKernel on a copy of adv over its first numRows rows, with a scratch buffer of the size it asks. */
async function runWhiten(d: GPUDevice, adv: Float32Array, mask: Float32Array, numRows: number): Promise<Float32Array> {
  return withValidation(d, async () => {
    const g = new Scratch(d);
    const k = whitenKernel.create(d);
    const buf = g.upload(adv);
    const partials = g.empty(whitenScratchWords(numRows));
    dispatch(d, [[k, k.bind({ mask: g.upload(mask), adv: buf, partials }, { numRows })]]);
    const res = await g.readF32(buf, adv.length);
    g.destroy();
    k.destroy();
    return res;
  });
}

async function checkWhiten(d: GPUDevice, adv: Float32Array, mask: Float32Array, name: string): Promise<Float32Array> {
  const R = adv.length;
  const ref = whitenCpu(adv, mask);
  const got = await runWhiten(d, adv, mask, R);
  const { count, sd, maxDev } = whitenStats(adv, mask);
  const atol = 1e-5 * Math.max(1, maxDev / sd);
  const r = expectClose(got, ref, { atol, rtol: 1e-5, label: `whiten ${name}` });
  let used = 0;
  for (let i = 0; i < R; i++) used = Math.max(used, Math.abs(got[i]! - ref[i]!) / (atol + 1e-5 * Math.abs(ref[i]!)));
  console.info(`[close] whiten ${name}: max |err| ${r.maxAbs.toExponential(2)}, ${(100 * used).toFixed(2)}% of tolerance (atol ${atol.toExponential(2)})`);
  for (let i = 0; i < R; i++) if (mask[i] === 0 || count <= 1) expect(got[i], `row ${i} exactly 0`).toBe(0);
  return got;
}

describe('trajStats output feeds advantage.wgsl', () => {
  it('opob with IS weights and entropyScale from the GPU trajStats buffer', async () => {
    const d = await device();
    const c = groupedRollout(9, [5, 'pad', 3, 8, 2, 'pad', 16, 1, 4, 7], 6);
    const N = c.N;
    const tp = c.tp;
    const shape = { numTraj: N, tp, maxTurns: 2, actionLen: 3, nRoles: 1 };
    const inp = { ...c, turns: new Uint32Array(N).fill(2), trajStats: trajStatsCpu(c, tp) };
    const cleanLogp = Float32Array.from(c.logpOld, (x) => (Number.isNaN(x) ? 0 : x));
    const results: Array<[string, Float32Array, Float32Array]> = [];
    const optsList = [
      { ...ADVANTAGE_DEFAULTS, estimator: 'opob' as const, isCap: 3, entropyScale: true },
      { ...ADVANTAGE_DEFAULTS, estimator: 'group' as const, entropyScale: true, scaleStd: false },
    ];
    await withValidation(d, async () => {
      const g = new Scratch(d);
      const ts = trajStatsKernel.create(d);
      const ak = advantageKernel.create(d);
      const stats = g.empty(N * TRAJ_STATS_WORDS);
      const mask = g.upload(c.mask);
      const tsCall = ts.bind(
        {
          mask, logpOld: g.upload(c.logpOld), logpRollout: g.upload(c.logpRollout),
          entropyOld: g.upload(c.entropyOld), sumP2Old: g.upload(c.sumP2Old), out: stats,
        },
        { numTraj: N, tp },
      );
      const common = {
        trajIn: g.upload(packTrajIn(inp)), turnIn: g.upload(packTurnIn({}, N, 2)), roleRewards: g.upload(new Float32Array(N)),
        trajStats: stats, mask, logpOld: g.upload(cleanLogp), logpRef: g.upload(cleanLogp),
      };
      const outs = optsList.map(() => g.empty(N * tp));
      const calls = optsList.map((o, k) => ak.bind({ ...common, adv: outs[k]! }, { ...shape, ...o }));
      dispatch(d, [[ts, tsCall], ...calls.map((call) => [ak, call] as [typeof ak, typeof call])]);
      for (let k = 0; k < optsList.length; k++) {
        const o = optsList[k]!;
        results.push([o.estimator, await g.readF32(outs[k]!, N * tp), advantageCpu(inp, o, shape)]);
      }
      g.destroy();
      ts.destroy();
      ak.destroy();
    });
    for (const [name, got, ref] of results) {
      const s = maxPerGroup(ref, c.groupSize, tp);
      for (let i = 0; i < ref.length; i++) {
        expect(Math.abs(got[i]! - ref[i]!) <= 1e-4 * (s[i]! + Math.abs(ref[i]!)), `${name} row ${i}: got ${got[i]}, expected ${ref[i]}`).toBe(true);
      }
    }
  });
});
