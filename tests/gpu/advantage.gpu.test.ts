/**
 * advantage.wgsl vs advantageCpu (kernels/advantage/advantage.ts): every estimator with its option
 * combinations (62 option sets), on seeded random batches of several shapes: uniform groups filling
 * exactly one workgroup; variable groups with padding trajectories at N = 67 and 130 (not multiples
 * of 64); tp cutting the last turn short or running past the turns; and extremes (rewards, turn and
 * role rewards of order 1e4, log IS weights up to +-1000, g2 = 0, entropy 0).
 *
 * Tolerance: |got - ref| <= tol (s + |ref|), s = the largest |ref| in the row's group. The GPU
 * computes in f32, the reference in float64 from the same f32 inputs; each cancellation inside a
 * group (R - mean, v - mu, R^S - R^S', R - b) loses a few f32 ulps of the group's values, then
 * divisions by std + eps, IGPO's backward sums over <= 4 turns and exp of the IS factor add a few
 * more, so tol = 2e-5 (about 150 ulps; observed <= 4e-6). Extreme OPOB (log IS up to +-1000) takes
 * differences of log weights near 2000, where one f32 ulp is 1.2e-4, so its weights may carry that
 * relative error: tol 1e-3 there. Zeros the structure guarantees (masked rows; groups of equal
 * rewards under group/rloo/opob/REINFORCE++-baseline) must be exactly 0 on the GPU, since
 * adv_zero_frac and the collapse metrics count them.
 */
import { describe, expect, it } from 'vitest';
import {
  ADV_ESTIMATORS,
  ADVANTAGE_DEFAULTS,
  advantageCpu,
  advantageKernel,
  type AdvantageOptions,
} from '../../kernels/advantage/advantage';
import { dispatch, Scratch } from '../../kernels/selftest/harness';
import { withValidation } from '../helpers/validation';
import { requireGpu } from '../helpers/requireGpu';
import { advantageVariants, variantLabel as label } from '../helpers/advantageVariants';
import { advantageBatch, advantageBuffers, type AdvantageBatch } from '../../kernels/selftest/fixtures';

const TOL = 2e-5;
const TOL_OPOB_EXTREME = 1e-3;

const CASES: AdvantageBatch[] = [
  // 8 groups of 8 = 64 trajectories: one full workgroup. tp = T * actionLen.
  advantageBatch('uniform N=64', 1, new Array<number>(8).fill(8), { T: 3, aL: 2, tp: 6, nRoles: 2 }),
  // Variable groups with padding, N = 67 (two workgroups, the second nearly empty); tp 11 cuts turn 3.
  advantageBatch('variable N=67', 2, [5, 'pad', 3, 8, 2, 'pad', 16, 1, 4, 7, 'pad', 6, 12, 1], { T: 4, aL: 3, tp: 11, nRoles: 3 }),
  // N = 130 with rows past the last turn (tp = T * actionLen + 2).
  advantageBatch('variable N=130', 3, [9, 9, 3, 'pad', 'pad', 16, 2, 2, 11, 8, 8, 8, 5, 16, 4, 4, 6, 7], { T: 2, aL: 4, tp: 10, nRoles: 2 }),
  advantageBatch('extreme N=67', 4, [5, 'pad', 3, 8, 2, 'pad', 16, 1, 4, 7, 'pad', 6, 12, 1], { T: 4, aL: 3, tp: 11, nRoles: 3, extreme: true }),
];

const VARIANTS = advantageVariants();

/** Rows whose advantage must be exactly 0 on the GPU: masked, or a group of equal rewards. */
function structuralZeros(c: AdvantageBatch, o: AdvantageOptions): Uint8Array {
  const { inp, shape } = c;
  const z = new Uint8Array(shape.numTraj * shape.tp);
  const collapses =
    (!o.byRole && (o.estimator === 'group' || o.estimator === 'rloo' || o.estimator === 'opob')) ||
    (o.estimator === 'reinforce' && o.baseline && o.klInReward === 0);
  for (let n = 0; n < shape.numTraj; n++) {
    const g0 = inp.groupStart[n]!;
    let equal = inp.groupSize[n]! > 1;
    for (let m = g0; m < g0 + inp.groupSize[n]!; m++) if (inp.reward[m] !== inp.reward[g0]) equal = false;
    for (let j = 0; j < shape.tp; j++) {
      const i = n * shape.tp + j;
      z[i] = inp.mask[i] === 0 || (collapses && equal) ? 1 : 0;
    }
  }
  return z;
}

/** Worst errors over all checks, for the report. */
const worst: Record<string, number> = {};

/**
 * Per-row error scale: the largest |ref| over the rows of the row's group (+1e-7 so a group that
 * is 0 in float64 may hold f32 dust). Cancellations inside a group (R - mean, v - mu, R - b) lose
 * digits relative to the group's values, not to one small result, and normalized estimators
 * (scaleStd, IGPO) have outputs of order 1 whatever the input scale, so this scale fits both.
 */
function groupScales(c: AdvantageBatch, ref: Float32Array): Float64Array {
  const { tp, numTraj: N } = c.shape;
  const s = new Float64Array(N * tp);
  for (let n = 0; n < N; ) {
    const G = c.inp.groupSize[n]!;
    let m = 0;
    for (let i = n * tp; i < (n + G) * tp; i++) m = Math.max(m, Math.abs(ref[i]!));
    s.fill(m + 1e-7, n * tp, (n + G) * tp);
    n += G;
  }
  return s;
}

/** Rows outside |got - ref| <= tol * (scale + |ref|), and the worst |got - ref| / (scale + |ref|). */
function compare(got: Float32Array, ref: Float32Array, scale: Float64Array, tol: number) {
  let bad = 0;
  let first = -1;
  let w = 0;
  for (let i = 0; i < ref.length; i++) {
    const e = got[i] === ref[i] ? 0 : Math.abs(got[i]! - ref[i]!) / (scale[i]! + Math.abs(ref[i]!));
    if (!(e <= tol)) {
      bad++;
      if (first < 0) first = i;
    }
    w = Math.max(w, Number.isNaN(e) ? Infinity : e);
  }
  return { bad, first, worst: w };
}

/** Every option set of VARIANTS on batch c, once per extra configuration: the advantages of each. */
async function runOptionSets(c: AdvantageBatch, extras: Array<{ groupSize?: number }>): Promise<Float32Array[][]> {
  const device = await requireGpu();
  const R = c.shape.numTraj * c.shape.tp;
  const opts = VARIANTS.map((v): AdvantageOptions => ({ ...ADVANTAGE_DEFAULTS, ...v }));
  return withValidation(device, async () => {
    const g = new Scratch(device);
    const kernel = advantageKernel.create(device);
    const bufs = advantageBuffers((d) => g.upload(d), c);
    const out: Float32Array[][] = [];
    for (const extra of extras) {
      const advs = opts.map(() => g.empty(R));
      const calls = opts.map((o, k) => kernel.bind({ ...bufs, adv: advs[k]! }, { ...c.shape, ...o, ...extra }));
      dispatch(device, calls.map((call) => [kernel, call] as [typeof kernel, typeof call]));
      const res: Float32Array[] = [];
      for (const b of advs) res.push(await g.readF32(b, R));
      out.push(res);
    }
    g.destroy();
    kernel.destroy();
    return out;
  });
}

async function checkCase(c: AdvantageBatch) {
  const { inp, shape } = c;
  const R = shape.numTraj * shape.tp;
  const opts = VARIANTS.map((v): AdvantageOptions => ({ ...ADVANTAGE_DEFAULTS, ...v }));
  const [outs] = (await runOptionSets(c, [{}])) as [Float32Array[]];
  const failures: string[] = [];
  opts.forEach((o, k) => {
    const ref = advantageCpu(inp, o, shape);
    const got = outs[k]!;
    const name = `${c.name} ${label(VARIANTS[k]!)}`;
    const tol = c.extreme && o.estimator === 'opob' ? TOL_OPOB_EXTREME : TOL;
    const r = compare(got, ref, groupScales(c, ref), tol);
    const key = `${o.estimator}${c.extreme ? ' (extreme)' : ''}`;
    worst[key] = Math.max(worst[key] ?? 0, r.worst);
    if (r.bad > 0) {
      failures.push(`${name}: ${r.bad} of ${R} differ (tol ${tol}); first [${r.first}] got ${got[r.first]}, expected ${ref[r.first]}`);
    }
    const zeros = structuralZeros(c, o);
    let nz = 0;
    for (let i = 0; i < R; i++) if (zeros[i] && got[i] !== 0) nz++;
    if (nz > 0) failures.push(`${name}: ${nz} rows that must be exactly 0 are not`);
  });
  expect(failures, failures.slice(0, 8).join('\n')).toEqual([]);
}

/**
 * The same option sets with the run's group size compiled in (AdvantageConfig.groupSize: groups of
 * that size take meanStdFixed, others the general walks) must give the general pipeline's words.
 */
async function checkFixedGroup(c: AdvantageBatch, groupSize: number) {
  const R = c.shape.numTraj * c.shape.tp;
  expect(Array.from(c.inp.groupSize).filter((g) => g === groupSize).length, `${c.name} has groups of ${groupSize}`).toBeGreaterThan(0);
  const [fixed, general] = (await runOptionSets(c, [{ groupSize }, {}])) as [Float32Array[], Float32Array[]];
  const failures: string[] = [];
  let nonZero = 0;
  VARIANTS.forEach((_, k) => {
    const a = new Uint32Array(fixed[k]!.buffer, fixed[k]!.byteOffset, R);
    const b = new Uint32Array(general[k]!.buffer, general[k]!.byteOffset, R);
    const diff = a.findIndex((w, i) => w !== b[i]);
    if (diff >= 0) failures.push(`${c.name} groupSize ${groupSize} ${label(VARIANTS[k]!)}: row ${diff} is ${fixed[k]![diff]}, the general pipeline gives ${general[k]![diff]}`);
    nonZero += fixed[k]!.filter((x) => x !== 0).length;
  });
  expect(failures, failures.slice(0, 8).join('\n')).toEqual([]);
  // Not a comparison of two zero-filled buffers.
  expect(nonZero).toBeGreaterThan(R);
}

describe('advantage.wgsl with the group size compiled in gives the general pipeline\'s bits', () => {
  const fixedCases: Array<[AdvantageBatch, number]> = [
    [CASES[0]!, 8],
    [CASES[1]!, 8],
    [CASES[1]!, 16],
    [CASES[2]!, 9],
    [CASES[3]!, 5],
    [advantageBatch('2 groups of 64', 5, [64, 64], { T: 3, aL: 2, tp: 6, nRoles: 2 }), 64],
    [advantageBatch('3 groups of 33, padding', 6, [33, 'pad', 33, 33], { T: 2, aL: 3, tp: 7, nRoles: 2 }), 33],
    [advantageBatch('extreme groups of 2', 7, [2, 2, 'pad', 2, 3, 2], { T: 2, aL: 2, tp: 4, nRoles: 2, extreme: true }), 2],
  ];
  for (const [c, G] of fixedCases) it(`${c.name}, groupSize ${G}: ${VARIANTS.length} option sets`, async () => checkFixedGroup(c, G));
  it('refuses a group size past its member array, or not a whole number', async () => {
    const kernel = advantageKernel.create(await requireGpu());
    const c = CASES[0]!;
    const cfg = { ...c.shape, ...ADVANTAGE_DEFAULTS };
    const bufs = Object.fromEntries(['trajIn', 'turnIn', 'roleRewards', 'trajStats', 'mask', 'logpOld', 'logpRef', 'adv'].map((n) => [n, { buffer: null as unknown as GPUBuffer }]));
    expect(() => kernel.bind(bufs as never, { ...cfg, groupSize: 65 })).toThrow(/groupSize 65 is outside 0\.\.64/);
    expect(() => kernel.bind(bufs as never, { ...cfg, groupSize: 2.5 })).toThrow(/groupSize 2.5 is outside/);
    kernel.destroy();
  });
});

describe('advantage.wgsl matches advantageCpu', () => {
  it('covers every estimator', () => {
    expect(new Set(VARIANTS.map((v) => v.estimator))).toEqual(new Set(ADV_ESTIMATORS));
  });
  for (const c of CASES) it(`${c.name}: ${VARIANTS.length} option sets`, async () => checkCase(c));
  it('worst errors', () => {
    // max |got - ref| / (group scale + |ref|) per estimator over all cases and option sets.
    for (const [k, w] of Object.entries(worst)) console.info(`[close] advantage ${k}: max scaled error ${w.toExponential(2)}`);
    expect(Object.keys(worst).length).toBeGreaterThan(0);
  });
});
