/**
 * Self-tests of whitening folded into the kernels that write the rows (the hardware variant's
 * REINFORCE++ and PPO; from tests/gpu/whitenFold.gpu.test.ts): advantageFold and gaeUnrolledFold
 * write their own pipelines' rows and, behind them, each workgroup's masked moments; then
 * whitenFoldApply whitens from those records. Checked: the rows against the producer's own
 * pipeline (bits), the records against float64 moments of those rows, and the whitened rows
 * against whitenCpu.
 * Tolerances: counts exactly. The mean and m2 come from Welford updates and a 6-level tree whose
 * roundings are all of the size of the deviations from the pivot (one of the rows), so they scale
 * with spread = max |A - mean| over a block: atol 1e-6 spread on the means, rtol 1e-5 plus atol
 * 1e-7 n spread^2 on m2 (about 10 ulps). Whitened rows: whiten's own bound (advantageFamily.ts).
 */
import { ADVANTAGE_DEFAULTS, advantageFoldKernel, advantageKernel, packTrajIn, type AdvantageOptions } from '../advantage';
import { gaeUnrolledFoldKernel, gaeUnrolledKernel } from '../critic';
import { unpackFoldMoments, whitenFoldAdvWords, whitenFoldApplyKernel, whitenFoldBlocks, whitenFoldMomentsCpu } from '../whiten';
import { createRng } from '../../workers/rng';
import { whitenChecks } from './advantageFamily';
import { advantageBatch, advantageBuffers, GROUPS_130, GROUPS_67, type AdvantageBatch } from './fixtures';
import { dispatch, exact, type Check, type Scratch, type SelfTestCase, withScratch } from './harness';

// Each is one pass (a kernel with its adv buffer's size checked); the table lists their pipelines.
const applyPass = whitenFoldApplyKernel.kernels[0]!;
const advantageFoldPass = advantageFoldKernel.kernels[0]!;
const gaeFoldPass = gaeUnrolledFoldKernel.kernels[0]!;

/** What a producer left: its rows (with the plain pipeline's bits beside them) and its records. */
interface Produced {
  rows: Float32Array;
  plain: Float32Array;
  records: Float32Array;
  mask: Float32Array;
  numTraj: number;
  tp: number;
}

/** The records against float64 moments of the rows, the rows against the plain pipeline. */
function producerChecks(p: Produced): Check[] {
  const ref = whitenFoldMomentsCpu(p.rows, p.mask, p.numTraj, p.tp);
  const got = unpackFoldMoments(p.records, ref.length);
  const spread = Math.max(0, ...ref.map((r) => r.maxDev));
  const most = Math.max(0, ...ref.map((r) => r.count));
  const bits = (a: Float32Array) => new Uint32Array(a.buffer, a.byteOffset, a.length);
  return [
    { output: 'A (bits, against the pipeline without the records)', actual: bits(p.rows), expected: bits(p.plain), tol: exact('the records are written beside the rows, which are the same code') },
    { output: 'records: masked rows per block', actual: got.map((m) => m.count), expected: ref.map((m) => m.count), tol: exact('a count') },
    {
      output: 'records: mean per block',
      actual: got.map((m) => m.mean),
      expected: ref.map((m) => m.mean),
      tol: { atol: 1e-6 * spread, rtol: 0, why: 'Welford updates and a tree, every rounding of the size of A − pivot: atol 1e-6 max|A − mean|' },
    },
    {
      output: 'records: m2 per block',
      actual: got.map((m) => m.m2),
      expected: ref.map((m) => m.m2),
      tol: { atol: 1e-7 * most * spread * spread, rtol: 1e-5, why: 'the same roundings squared and summed: rtol 1e-5, atol 1e-7 n max|A − mean|²' },
    },
  ];
}

/** Runs whitenFoldApply over the producer's adv (rows and records) and reads the whitened rows. */
async function whitenFolded(device: GPUDevice, s: Scratch, adv: GPUBuffer, mask: GPUBuffer, R: number, numTraj: number): Promise<Float32Array> {
  const k = s.kernel(whitenFoldApplyKernel.create(device));
  dispatch(device, [[k, k.bind({ mask, adv }, { numRows: R, blocks: whitenFoldBlocks(numTraj) })]]);
  return s.readF32(adv, R);
}

function advantageFoldCase(name: string, batch: () => AdvantageBatch, o: Partial<AdvantageOptions>, kernelUnderTest: 'producer' | 'apply' = 'producer'): SelfTestCase {
  return {
    ...(kernelUnderTest === 'producer' ? { kernel: advantageFoldPass, uses: [applyPass] } : { kernel: applyPass, uses: [advantageFoldPass] }),
    name,
    run: (device) =>
      withScratch(device, async (s) => {
        const c = batch();
        const N = c.shape.numTraj;
        const R = N * c.shape.tp;
        const bufs = advantageBuffers((d) => s.upload(d), c);
        const config = { ...c.shape, ...ADVANTAGE_DEFAULTS, ...o };
        const plain = s.kernel(advantageKernel.create(device));
        const fold = s.kernel(advantageFoldKernel.create(device));
        const plainAdv = s.empty(R);
        const adv = s.empty(whitenFoldAdvWords(R, whitenFoldBlocks(N)));
        dispatch(device, [
          [plain, plain.bind({ ...bufs, adv: plainAdv }, config)],
          [fold, fold.bind({ ...bufs, adv }, config)],
        ]);
        const all = await s.readF32(adv, whitenFoldAdvWords(R, whitenFoldBlocks(N)));
        const rows = all.slice(0, R);
        const p = { rows, plain: await s.readF32(plainAdv, R), records: all.subarray(R), mask: c.inp.mask, numTraj: N, tp: c.shape.tp };
        return [...producerChecks(p), ...whitenChecks(await whitenFolded(device, s, adv, bufs.mask, R, N), rows, c.inp.mask)];
      }),
  };
}

function gaeFoldCase(N: number, tp: number, offset: number): SelfTestCase {
  return {
    kernel: gaeFoldPass,
    uses: [applyPass],
    name: `N ${N}, ${tp} rows, values around ${offset}; then whitened`,
    run: (device) =>
      withScratch(device, async (s) => {
        const rng = createRng(N * 13 + tp);
        const critic = Float32Array.from({ length: 37 }, () => 3 * rng.normal() + offset);
        const stateKey = Uint32Array.from({ length: N * tp }, () => rng.int(37));
        const mask = Float32Array.from({ length: N * tp }, () => (rng.next() < 0.8 ? 1 : 0));
        const reward = Float32Array.from({ length: N }, () => rng.normal() + offset);
        const R = N * tp;
        const inputs = {
          critic: s.upload(critic), stateKey: s.upload(stateKey), mask: s.upload(mask),
          trajIn: s.upload(packTrajIn({ reward, groupStart: new Uint32Array(N), groupSize: new Uint32Array(N).fill(1), turns: new Uint32Array(N).fill(1) })),
        };
        const config = { numTraj: N, tp, gamma: 0.99, lambda: 0.95 };
        const plain = s.kernel(gaeUnrolledKernel.create(device));
        const fold = s.kernel(gaeUnrolledFoldKernel.create(device));
        const plainAdv = s.empty(R);
        const adv = s.empty(whitenFoldAdvWords(R, whitenFoldBlocks(N)));
        dispatch(device, [
          [plain, plain.bind({ ...inputs, adv: plainAdv, ret: s.empty(R) }, config)],
          [fold, fold.bind({ ...inputs, adv, ret: s.empty(R) }, config)],
        ]);
        const all = await s.readF32(adv, whitenFoldAdvWords(R, whitenFoldBlocks(N)));
        const rows = all.slice(0, R);
        const p = { rows, plain: await s.readF32(plainAdv, R), records: all.subarray(R), mask, numTraj: N, tp };
        return [...producerChecks(p), ...whitenChecks(await whitenFolded(device, s, adv, inputs.mask, R, N), rows, mask)];
      }),
  };
}

/** 'raw' advantages are the rewards: chosen values for whitening (a big offset, past 256 records). */
function rawBatch(name: string, groups: number, tp: number, reward: (n: number) => number): () => AdvantageBatch {
  return () => {
    const c = advantageBatch(name, groups + tp, new Array<number>(groups).fill(8), { T: 1, aL: tp, tp, nRoles: 1 });
    c.inp.reward = Float32Array.from({ length: c.shape.numTraj }, (_, n) => reward(n));
    return c;
  };
}

export const whitenFoldCases: SelfTestCase[] = [
  advantageFoldCase('REINFORCE++, N 67: groups of 1 to 16, KL in the reward', () => advantageBatch('N 67', 2, GROUPS_67, { T: 4, aL: 3, tp: 11, nRoles: 3 }), {
    estimator: 'reinforce', klInReward: 0.3, gamma: 0.9,
  }),
  advantageFoldCase('REINFORCE++ with its group baseline, N 130', () => advantageBatch('N 130', 3, GROUPS_130, { T: 2, aL: 4, tp: 10, nRoles: 2 }), {
    estimator: 'reinforce', baseline: true,
  }),
  advantageFoldCase('group estimator, rewards 1e4 N(0, 1)', () => advantageBatch('N 67 extreme', 4, GROUPS_67, { T: 4, aL: 3, tp: 11, nRoles: 3, extreme: true }), {}),
  advantageFoldCase('rewards 1e6 + N(0, 1) as advantages', rawBatch('1e6', 40, 3, (n) => 1e6 + Math.cos(n * 1.7)), { estimator: 'raw' }),
  advantageFoldCase('257 records (16,448 trajectories): a thread merges two', rawBatch('257 records', 2056, 2, (n) => Math.sin(n) * 3 + 0.5), { estimator: 'raw' }, 'apply'),
  gaeFoldCase(130, 9, 0),
  gaeFoldCase(300, 6, 1e4),
];
