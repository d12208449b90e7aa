/**
 * Whitening's pass 1 folded into the kernels that write the rows (hardware variant; kernels/whiten.ts
 * WHITEN_FOLD_HOOKS, whitenFoldApplyKernel): advantageFold and gaeUnrolledFold against their own
 * pipelines and against float64 moments, then whitenFoldApply against whitenCpu.
 *
 * Tolerances (f32 on the GPU, float64 references from the same f32 rows):
 * - The folding producers' rows (and GAE's returns): their own pipelines' bits, exactly (those
 *   carry whitenFoldNone.wgsl's hooks, which do nothing); the hooks only read what the producer
 *   writes.
 * - Each block's moments: the count exactly. The mean and m2 come from Welford updates (Chan's
 *   merge with a one-row set) over a thread's <= tp rows, then a 6-level tree over the 64 threads;
 *   every rounding is of the size of the deviations from the pivot, one of the rows, so the errors
 *   scale with spread = max |A - mean| over the block, not with |mean|: |mean - ref| <= 1e-6 spread
 *   and |m2 - ref| <= 1e-5 m2 + 1e-7 count spread^2 (about 10 ulps; the worst seen is printed).
 * - Whitened rows: advantageFamily.gpu.test.ts's bound for whitening, atol = 1e-5 max(1, max|A -
 *   mean| / sd), rtol 1e-5. Masked-out rows, every row when at most one is masked in, and equal
 *   values: exactly 0.
 */
import { describe, expect, it } from 'vitest';
import { ADVANTAGE_DEFAULTS, ADVANTAGE_WORKGROUP_SIZE, advantageFoldKernel, advantageKernel, type AdvantageOptions } from '../../kernels/advantage';
import { packTrajIn } from '../../kernels/advantage';
import { gaeUnrolledFoldKernel, gaeUnrolledKernel } from '../../kernels/critic';
import {
  unpackFoldMoments,
  whitenCpu,
  whitenFoldAdvWords,
  whitenFoldApplyKernel,
  whitenFoldBlocks,
  whitenFoldMomentsCpu,
  whitenStats,
  WHITEN_FOLD_TRAJ_PER_BLOCK,
} from '../../kernels/whiten';
import { createRng } from '../../workers/rng';
import { advantageVariants, variantLabel } from '../helpers/advantageVariants';
import { expectClose, expectEqualArrays } from '../helpers/expectClose';
import { GpuScratch, runCalls, withValidation } from '../helpers/gpuBuffers';
import { requireGpu } from '../helpers/requireGpu';
import { advantageBatch, advantageBuffers, type AdvantageBatch } from '../helpers/rlFixtures';

const MEAN_TOL = 1e-6;
const M2_RTOL = 1e-5;
const M2_ATOL = 1e-7;
/** Worst |error| / allowed of the moments over every check, printed at the end. */
const worst = { mean: 0, m2: 0 };

/** Failures of the producer's records against float64 moments of the rows it wrote. */
function momentsFailures(name: string, rows: Float32Array, tail: Float32Array, mask: Float32Array, numTraj: number, tp: number): string[] {
  const ref = whitenFoldMomentsCpu(rows, mask, numTraj, tp);
  const got = unpackFoldMoments(tail, ref.length);
  const out: string[] = [];
  ref.forEach((r, b) => {
    const g = got[b]!;
    const spread = r.maxDev;
    const meanAllowed = MEAN_TOL * spread;
    const m2Allowed = M2_RTOL * r.m2 + M2_ATOL * r.count * spread * spread;
    const eMean = Math.abs(g.mean - r.mean);
    const eM2 = Math.abs(g.m2 - r.m2);
    if (spread > 0) {
      worst.mean = Math.max(worst.mean, eMean / meanAllowed);
      worst.m2 = Math.max(worst.m2, eM2 / m2Allowed);
    }
    if (g.count !== r.count) out.push(`${name} block ${b}: count ${g.count}, expected ${r.count}`);
    else if (!(eMean <= meanAllowed)) out.push(`${name} block ${b}: mean ${g.mean}, expected ${r.mean} (allowed ${meanAllowed})`);
    else if (!(eM2 <= m2Allowed)) out.push(`${name} block ${b}: m2 ${g.m2}, expected ${r.m2} (allowed ${m2Allowed})`);
  });
  return out;
}

/** Whitened rows against whitenCpu of the unwhitened rows, with the exact zeros. */
function expectWhitened(name: string, got: Float32Array, rows: Float32Array, mask: Float32Array) {
  const ref = whitenCpu(rows, mask);
  const st = whitenStats(rows, mask);
  const atol = 1e-5 * Math.max(1, st.maxDev / st.sd);
  expectClose(got, ref, { atol, rtol: 1e-5, label: `${name}: whitened rows` });
  const zeros: number[] = [];
  for (let i = 0; i < rows.length; i++) if ((mask[i] === 0 || st.count <= 1 || st.maxDev === 0) && got[i] !== 0) zeros.push(i);
  expect(zeros, `${name}: rows that must be exactly 0`).toEqual([]);
}

const OPTION_SETS = advantageVariants();

/**
 * Every option set on batch c, with advantageKernel and with advantageFoldKernel (adv with the
 * moments behind its rows, all of it garbage first): the rows of both and the fold's records.
 */
async function runAdvantage(c: AdvantageBatch, sets: Array<Partial<AdvantageOptions>>, groupSize = 0) {
  const device = await requireGpu();
  const N = c.shape.numTraj;
  const R = N * c.shape.tp;
  const words = whitenFoldAdvWords(R, whitenFoldBlocks(N));
  return withValidation(device, async () => {
    const g = new GpuScratch(device);
    const plain = advantageKernel.create(device);
    const fold = advantageFoldKernel.create(device);
    const bufs = advantageBuffers((d) => g.upload(d), c);
    const out: Array<{ plain: Uint32Array; fold: Float32Array }> = [];
    for (const o of sets) {
      const config = { ...c.shape, ...ADVANTAGE_DEFAULTS, ...o, groupSize };
      const a = g.empty(R);
      const b = g.empty(words);
      runCalls(device, [
        [plain, plain.bind({ ...bufs, adv: a }, config)],
        [fold, fold.bind({ ...bufs, adv: b }, config)],
      ]);
      out.push({ plain: await g.readU32(a, R), fold: await g.readF32(b, words) });
    }
    g.destroy();
    plain.destroy();
    fold.destroy();
    return out;
  });
}

async function checkAdvantageFold(c: AdvantageBatch, groupSize = 0) {
  const R = c.shape.numTraj * c.shape.tp;
  const outs = await runAdvantage(c, OPTION_SETS, groupSize);
  const failures: string[] = [];
  outs.forEach((o, k) => {
    const name = `${c.name} ${variantLabel(OPTION_SETS[k]!)}${groupSize ? ` groupSize ${groupSize}` : ''}`;
    const rows = o.fold.subarray(0, R);
    const bits = new Uint32Array(rows.buffer, rows.byteOffset, R);
    const diff = bits.findIndex((w, i) => w !== o.plain[i]);
    if (diff >= 0) failures.push(`${name}: row ${diff} is ${rows[diff]}, advantage.wgsl's own pipeline gives ${new Float32Array(o.plain.buffer)[diff]}`);
    failures.push(...momentsFailures(name, rows, o.fold.subarray(R), c.inp.mask, c.shape.numTraj, c.shape.tp));
  });
  expect(failures, failures.slice(0, 8).join('\n')).toEqual([]);
}

interface GaeCase {
  N: number;
  tp: number;
  critic: Float32Array;
  stateKey: Uint32Array;
  mask: Float32Array;
  reward: Float32Array;
}

function gaeCase(N: number, tp: number, seed: number, maskP: number, offset = 0): GaeCase {
  const rng = createRng(seed);
  const C = 37;
  const critic = Float32Array.from({ length: C }, () => rng.normal() * 3 + offset);
  const stateKey = Uint32Array.from({ length: N * tp }, () => rng.int(C));
  const cut = Uint32Array.from({ length: N }, () => rng.int(tp + 1));
  const mask = Float32Array.from({ length: N * tp }, (_, i) => (i % tp < cut[Math.floor(i / tp)]! && rng.next() < maskP ? 1 : 0));
  const reward = Float32Array.from({ length: N }, () => rng.normal() + offset);
  return { N, tp, critic, stateKey, mask, reward };
}

const GAE = { gamma: 0.99, lambda: 0.95 };

/**
 * gaeUnrolled and gaeUnrolledFold on the same inputs, then (whiten) whitenFoldApply after the
 * fold: the plain [adv, ret] bits, the fold's [adv + records, ret] words, and the whitened rows.
 */
async function runGae(c: GaeCase, whiten = false) {
  const device = await requireGpu();
  const R = c.N * c.tp;
  const blocks = whitenFoldBlocks(c.N);
  return withValidation(device, async () => {
    const g = new GpuScratch(device);
    const plain = gaeUnrolledKernel.create(device);
    const fold = gaeUnrolledFoldKernel.create(device);
    const apply = whitenFoldApplyKernel.create(device);
    const trajIn = g.upload(packTrajIn({ reward: c.reward, groupStart: new Uint32Array(c.N), groupSize: new Uint32Array(c.N).fill(1), turns: new Uint32Array(c.N).fill(1) }));
    const mask = g.upload(c.mask);
    const inputs = { critic: g.upload(c.critic), stateKey: g.upload(c.stateKey), mask, trajIn };
    const a = g.empty(R);
    const ra = g.empty(R);
    const b = g.empty(whitenFoldAdvWords(R, blocks));
    const rb = g.empty(R);
    const config = { numTraj: c.N, tp: c.tp, ...GAE };
    runCalls(device, [
      [plain, plain.bind({ ...inputs, adv: a, ret: ra }, config)],
      [fold, fold.bind({ ...inputs, adv: b, ret: rb }, config)],
    ]);
    const folded = await g.readF32(b, whitenFoldAdvWords(R, blocks));
    let whitened: Float32Array | null = null;
    if (whiten) {
      runCalls(device, [[apply, apply.bind({ mask, adv: b }, { numRows: R, blocks })]]);
      whitened = await g.readF32(b, R);
    }
    const out = {
      plain: [...(await g.readU32(a, R)), ...(await g.readU32(ra, R))],
      fold: [...new Uint32Array(folded.buffer, 0, R), ...(await g.readU32(rb, R))],
      folded,
      whitened,
    };
    g.destroy();
    plain.destroy();
    fold.destroy();
    apply.destroy();
    return out;
  });
}

describe('advantageFold: advantage.wgsl\'s rows, and the moments of each workgroup\'s rows', () => {
  const cases: Array<[AdvantageBatch, number]> = [
    [advantageBatch('uniform N=64', 1, new Array<number>(8).fill(8), { T: 3, aL: 2, tp: 6, nRoles: 2 }), 0],
    [advantageBatch('variable N=67', 2, [5, 'pad', 3, 8, 2, 'pad', 16, 1, 4, 7, 'pad', 6, 12, 1], { T: 4, aL: 3, tp: 11, nRoles: 3 }), 0],
    [advantageBatch('variable N=130', 3, [9, 9, 3, 'pad', 'pad', 16, 2, 2, 11, 8, 8, 8, 5, 16, 4, 4, 6, 7], { T: 2, aL: 4, tp: 10, nRoles: 2 }), 0],
    [advantageBatch('extreme N=67', 4, [5, 'pad', 3, 8, 2, 'pad', 16, 1, 4, 7, 'pad', 6, 12, 1], { T: 4, aL: 3, tp: 11, nRoles: 3, extreme: true }), 0],
    [advantageBatch('groups of 8, compiled in', 5, [8, 8, 'pad', 8, 8, 8, 8, 8, 8, 8, 3], { T: 3, aL: 2, tp: 6, nRoles: 2 }), 8],
  ];
  for (const [c, G] of cases) it(`${c.name}${G ? ` (groupSize ${G})` : ''}: ${OPTION_SETS.length} option sets`, async () => checkAdvantageFold(c, G));
});

describe('gaeUnrolledFold: gaeUnrolled.wgsl\'s advantages and returns, and the moments of each workgroup\'s advantages', () => {
  const cases = [
    ...[1, 2, 9, 24, 64].map((tp) => gaeCase(70, tp, tp, 0.8)),
    ...[1, 63, 64, 65, 300].map((N) => gaeCase(N, 9, 100 + N, 0.9)),
    gaeCase(130, 9, 7, 0),
    gaeCase(130, 9, 8, 1),
    gaeCase(200, 6, 9, 0.7, 1e4),
  ];
  for (const c of cases) {
    it(`N ${c.N}, tp ${c.tp}, mask density ${c.mask.filter((m) => m).length}/${c.mask.length}`, async () => {
      const o = await runGae(c);
      expectEqualArrays(o.fold, o.plain, `N ${c.N} tp ${c.tp}: [adv, ret] bits`);
      const R = c.N * c.tp;
      const f = momentsFailures(`gae N ${c.N} tp ${c.tp}`, o.folded.subarray(0, R), o.folded.subarray(R), c.mask, c.N, c.tp);
      expect(f, f.slice(0, 8).join('\n')).toEqual([]);
    });
  }
});

/** A batch whose 'raw' advantages are the rewards given: the rows whitening sees are chosen. */
function rawBatch(name: string, groups: number, groupSize: number, tp: number, reward: (n: number) => number, mask: (i: number) => number): AdvantageBatch {
  const c = advantageBatch(name, groups * 7 + tp, new Array<number>(groups).fill(groupSize), { T: 1, aL: tp, tp, nRoles: 1 });
  c.inp.reward = Float32Array.from({ length: c.shape.numTraj }, (_, n) => reward(n));
  c.inp.mask = Float32Array.from({ length: c.shape.numTraj * tp }, (_, i) => mask(i));
  return c;
}

/** advantageFold then whitenFoldApply, twice: the rows before whitening, and the whitened rows of both runs. */
async function runAdvantageWhitened(c: AdvantageBatch, o: Partial<AdvantageOptions>) {
  const device = await requireGpu();
  const N = c.shape.numTraj;
  const R = N * c.shape.tp;
  const blocks = whitenFoldBlocks(N);
  return withValidation(device, async () => {
    const g = new GpuScratch(device);
    const fold = advantageFoldKernel.create(device);
    const apply = whitenFoldApplyKernel.create(device);
    const bufs = advantageBuffers((d) => g.upload(d), c);
    const config = { ...c.shape, ...ADVANTAGE_DEFAULTS, ...o };
    const rows = g.empty(R);
    const plain = advantageKernel.create(device);
    runCalls(device, [[plain, plain.bind({ ...bufs, adv: rows }, config)]]);
    const runs: Float32Array[] = [];
    for (let k = 0; k < 2; k++) {
      const adv = g.empty(whitenFoldAdvWords(R, blocks));
      runCalls(device, [
        [fold, fold.bind({ ...bufs, adv }, config)],
        [apply, apply.bind({ mask: bufs.mask, adv }, { numRows: R, blocks })],
      ]);
      runs.push(await g.readF32(adv, R));
    }
    const out = { rows: await g.readF32(rows, R), runs };
    g.destroy();
    fold.destroy();
    apply.destroy();
    plain.destroy();
    return out;
  });
}

async function checkWhitened(c: AdvantageBatch, o: Partial<AdvantageOptions>) {
  const { rows, runs } = await runAdvantageWhitened(c, o);
  const bits = runs.map((r) => Array.from(new Uint32Array(r.buffer, r.byteOffset, r.length)));
  expectEqualArrays(bits[1]!, bits[0]!, `${c.name}: two runs (bits)`);
  expectWhitened(c.name, runs[0]!, rows, c.inp.mask);
  return rows;
}

describe('whitenFoldApply after a folding producer matches whitenCpu', () => {
  it('REINFORCE++ and PPO\'s estimators on grouped batches (N = 67, 130), two runs the same bits', async () => {
    await checkWhitened(advantageBatch('reinforce N=67', 2, [5, 'pad', 3, 8, 2, 'pad', 16, 1, 4, 7, 'pad', 6, 12, 1], { T: 4, aL: 3, tp: 11, nRoles: 3 }), {
      estimator: 'reinforce', klInReward: 0.3, gamma: 0.9,
    });
    await checkWhitened(advantageBatch('reinforce baseline N=130', 3, [9, 9, 3, 'pad', 'pad', 16, 2, 2, 11, 8, 8, 8, 5, 16, 4, 4, 6, 7], { T: 2, aL: 4, tp: 10, nRoles: 2 }), {
      estimator: 'reinforce', baseline: true,
    });
    const c = gaeCase(300, 9, 11, 0.9);
    const o = await runGae(c, true);
    expectWhitened('gae N 300', o.whitened!, o.folded.subarray(0, 300 * 9), c.mask);
  });

  it('past 256 records (16,400 trajectories: 257 blocks; 20,000 GAE trajectories: 313), where a thread merges several', async () => {
    const c = rawBatch('raw 257 blocks', 2050, 8, 2, (n) => Math.sin(n) * 3 + 0.5, (i) => (i % 5 === 3 ? 0 : 1));
    expect(whitenFoldBlocks(c.shape.numTraj)).toBe(257);
    await checkWhitened(c, { estimator: 'raw' });
    const gc = gaeCase(20_000, 3, 12, 0.8);
    const o = await runGae(gc, true);
    expectWhitened('gae 313 blocks', o.whitened!, o.folded.subarray(0, 60_000), gc.mask);
  });

  it('a common offset of 1e6, a spread of 1e-4 (a variance the size of the 1e-8 added), and 1e4-sized GAE values', async () => {
    await checkWhitened(rawBatch('1e6 + N(0,1)', 40, 4, 3, (n) => 1e6 + Math.cos(n * 1.7) * 1.3, () => 1), { estimator: 'raw' });
    await checkWhitened(rawBatch('0.5 + 1e-4 noise', 40, 4, 3, (n) => 0.5 + 1e-4 * Math.sin(n * 2.3), (i) => (i % 4 ? 1 : 0)), { estimator: 'raw' });
    const c = gaeCase(200, 6, 9, 0.7, 1e4);
    const o = await runGae(c, true);
    expectWhitened('gae offset 1e4', o.whitened!, o.folded.subarray(0, 1200), c.mask);
  });

  it('no row masked in, one (in a later block), equal values in every block', async () => {
    await checkWhitened(rawBatch('none', 30, 4, 3, (n) => n, () => 0), { estimator: 'raw' });
    await checkWhitened(rawBatch('one', 30, 4, 3, (n) => n - 1e3, (i) => (i === 70 * 3 + 1 ? 1 : 0)), { estimator: 'raw' });
    await checkWhitened(rawBatch('equal', 30, 4, 3, () => -1e6 / 3, (i) => (i % 7 === 3 ? 0 : 1)), { estimator: 'raw' });
  });
});

describe('the fold\'s buffers and blocks', () => {
  it('both producers run 64 trajectories a workgroup, one moments record each', () => {
    expect(ADVANTAGE_WORKGROUP_SIZE).toBe(WHITEN_FOLD_TRAJ_PER_BLOCK);
    expect(gaeUnrolledFoldKernel.kernels.map((k) => k.workgroupSize)).toEqual([WHITEN_FOLD_TRAJ_PER_BLOCK]);
    expect([whitenFoldBlocks(0), whitenFoldBlocks(1), whitenFoldBlocks(64), whitenFoldBlocks(65)]).toEqual([0, 1, 1, 2]);
  });

  it('an adv buffer without room for the records is refused by name, by every kernel that writes or reads them', async () => {
    const device = await requireGpu();
    const g = new GpuScratch(device);
    const c = advantageBatch('uniform N=64', 1, new Array<number>(8).fill(8), { T: 3, aL: 2, tp: 6, nRoles: 2 });
    const R = 64 * 6;
    const bufs = advantageBuffers((d) => g.upload(d), c);
    const fold = advantageFoldKernel.create(device);
    const config = { ...c.shape, ...ADVANTAGE_DEFAULTS };
    expect(() => fold.bind({ ...bufs, adv: g.empty(R) }, config)).toThrow(
      /advantageFold: the adv buffer holds 1536 bytes, 64 trajectories of 6 rows and their moments need 1552 \(whitenFoldAdvWords\)/,
    );
    const call = fold.bind({ ...bufs, adv: g.empty(R + 4) }, config);
    expect(() => call.update({ ...config, numTraj: 65 })).toThrow(/advantageFold: the adv buffer holds 1552 bytes/);
    const gae = gaeUnrolledFoldKernel.create(device);
    const b = g.empty(R);
    expect(() => gae.bind({ critic: b, stateKey: b, mask: b, trajIn: b, adv: b, ret: b }, { numTraj: 64, tp: 6, ...GAE })).toThrow(
      /gaeUnrolledFold: the adv buffer holds 1536 bytes/,
    );
    const apply = whitenFoldApplyKernel.create(device);
    expect(() => apply.bind({ mask: b, adv: b }, { numRows: R, blocks: 1 })).toThrow(
      /whitenFoldApply: the adv buffer holds 1536 bytes, 384 rows and 1 moments records need 1552 \(whitenFoldAdvWords\)/,
    );
    g.destroy();
    fold.destroy();
    gae.destroy();
    apply.destroy();
  });

  it('worst moments errors', () => {
    console.info(`[close] whitenFold moments: worst |mean error| ${worst.mean.toExponential(2)} of allowed, |m2 error| ${worst.m2.toExponential(2)} of allowed`);
    expect(worst.mean + worst.m2).toBeGreaterThan(0);
  });
});
