/**
 * Self-test of advantage.wgsl against advantageCpu (from tests/gpu/advantage.gpu.test.ts): every
 * estimator (group, rloo, raw, REINFORCE++, IGPO turn, CM2 turnGroup, GiGPO, VCPO's OPOB) and the
 * byRole and entropyScale options, on the test's seeded batches: 8 groups of 8 (one workgroup),
 * variable groups with padding trajectories at N = 67 (tp cuts the last turn short) and N = 130
 * (rows past the last turn), and extremes (rewards and turn rewards of order 1e4, log IS weights up
 * to ±1000, g2 = 0, entropies 0). Each batch runs all its option sets in one pass, as the test does.
 *
 * Tolerance, as in the test: |gpu - cpu| <= tol (s + |cpu|), s = the largest |cpu| in the row's
 * group (+1e-7). Each cancellation inside a group (R - mean, v - mu, R^S - R^S', R - b) loses a few
 * f32 ulps of the group's values, then divisions by std + eps, IGPO's backward sums over <= 4 turns
 * and exp of the IS factor add a few more: tol = 2e-5 (about 150 ulps). Extreme OPOB takes
 * differences of log weights near 2000, where one f32 ulp is 1.2e-4: tol 1e-3 there. The runner's
 * rule is atol + rtol |e|, so the values are compared divided by s with atol = rtol = tol, which is
 * that rule exactly; the errors shown are in units of the group's largest advantage.
 * Zeros the structure guarantees (masked rows; groups of equal rewards under group, rloo, opob and
 * REINFORCE++-baseline) must be exactly 0, since adv_zero_frac and the collapse metrics count them.
 */
import {
  ADVANTAGE_DEFAULTS,
  advantageCpu,
  advantageKernel,
  type AdvantageOptions,
} from '../advantage/advantage';
import { advantageBatch, advantageBuffers, GROUPS_130, GROUPS_67, groupScales, type AdvantageBatch } from './fixtures';
import { dispatch, exact, withScratch, type Check, type SelfTestCase, type Tolerance } from './harness';

const TOL: Tolerance = {
  atol: 2e-5,
  rtol: 2e-5,
  why: 'compared as A / s, s = the largest |A| in the group: f32 cancellations inside a group (R − mean, v − μ, R − b) lose a few ulps of its values; about 150 ulps',
};
const TOL_OPOB_EXTREME: Tolerance = {
  atol: 1e-3,
  rtol: 1e-3,
  why: 'compared as A / s; log IS weights up to ±1000 make log-weight differences near 2000, where one f32 ulp is 1.2e-4',
};
const ZEROS = exact('masked rows and groups of equal rewards (group, rloo, opob, REINFORCE++-baseline) give exactly 0: the collapse metrics count them');
const SAME_BITS = exact('the same sums in the same order as the general walks: the same f32 words');

/** An option set and, optionally, its name in the table (default: the options that differ from GRPO's). */
type Variant = Partial<AdvantageOptions> & { label?: string };

const SYMBOL: Partial<Record<keyof AdvantageOptions, string>> = { gamma: 'γ', stepWeight: 'ω', klInReward: 'β' };

function labelOf(v: Variant): string {
  if (v.label) return v.label;
  const parts: string[] = [v.estimator ?? 'group'];
  for (const [k, x] of Object.entries(v) as Array<[keyof AdvantageOptions, unknown]>) {
    if (k === 'estimator') continue;
    if (x === true) parts.push(k);
    else if (x === false) parts.push(k === 'unbiasedStd' ? 'population std' : `no ${k}`);
    else parts.push(`${SYMBOL[k] ?? k} ${Math.abs(x as number) >= 1e4 ? (x as number).toExponential().replace('e+', 'e') : x}`);
  }
  return parts.join(', ');
}

/** Rows whose advantage must be exactly 0 on the GPU: masked, or a group of equal rewards. */
function structuralZeros(b: AdvantageBatch, o: AdvantageOptions): number[] {
  const { inp, shape } = b;
  const collapses =
    (!o.byRole && (o.estimator === 'group' || o.estimator === 'rloo' || o.estimator === 'opob')) ||
    (o.estimator === 'reinforce' && o.baseline && o.klInReward === 0);
  const out: number[] = [];
  for (let n = 0; n < shape.numTraj; n++) {
    const g0 = inp.groupStart[n]!;
    let equal = inp.groupSize[n]! > 1;
    for (let m = g0; m < g0 + inp.groupSize[n]!; m++) if (inp.reward[m] !== inp.reward[g0]) equal = false;
    for (let j = 0; j < shape.tp; j++) {
      const i = n * shape.tp + j;
      if (inp.mask[i] === 0 || (collapses && equal)) out.push(i);
    }
  }
  return out;
}

/**
 * The option sets `variants` on one batch, against advantageCpu. With `groupSize`, the pipeline with
 * the run's group size compiled in (AdvantageConfig.groupSize, the hardware variant's) runs them,
 * and its output must also be the general pipeline's, bit for bit (its groups of other sizes run
 * the general walks).
 */
function advantageCase(name: string, batch: () => AdvantageBatch, variants: Variant[], groupSize?: number): SelfTestCase {
  return {
    kernel: advantageKernel,
    name,
    run: (device) =>
      withScratch(device, async (s) => {
        const b = batch();
        const { inp, shape } = b;
        const R = shape.numTraj * shape.tp;
        const opts = variants.map(({ label: _, ...v }): AdvantageOptions => ({ ...ADVANTAGE_DEFAULTS, ...v }));
        const k = s.kernel(advantageKernel.create(device));
        const bufs = advantageBuffers((d) => s.upload(d), b);
        const outs = opts.map(() => s.empty(R));
        const general = groupSize ? opts.map(() => s.empty(R)) : [];
        dispatch(device, [
          ...opts.map((o, i): [typeof k, ReturnType<typeof k.bind>] => [k, k.bind({ ...bufs, adv: outs[i]! }, { ...shape, ...o, ...(groupSize ? { groupSize } : {}) })]),
          ...general.map((adv, i): [typeof k, ReturnType<typeof k.bind>] => [k, k.bind({ ...bufs, adv }, { ...shape, ...opts[i]! })]),
        ]);
        const checks: Check[] = [];
        const zeroGot: number[] = [];
        const bitsGot: number[] = [];
        const bitsWant: number[] = [];
        for (const [i, o] of opts.entries()) {
          const got = await s.readF32(outs[i]!, R);
          const ref = advantageCpu(inp, o, shape);
          const sc = groupScales(ref, inp.groupSize, shape.tp);
          checks.push({
            output: labelOf(variants[i]!),
            actual: Float64Array.from(got, (x, r) => x / sc[r]!),
            expected: Float64Array.from(ref, (x, r) => x / sc[r]!),
            tol: b.extreme && o.estimator === 'opob' ? TOL_OPOB_EXTREME : TOL,
          });
          for (const r of structuralZeros(b, o)) zeroGot.push(got[r]!);
          if (groupSize) {
            const want = await s.readF32(general[i]!, R);
            bitsGot.push(...new Uint32Array(got.buffer, got.byteOffset, R));
            bitsWant.push(...new Uint32Array(want.buffer, want.byteOffset, R));
          }
        }
        checks.push({ output: 'A = 0 (masked, equal rewards)', actual: zeroGot, expected: zeroGot.map(() => 0), tol: ZEROS });
        if (groupSize) checks.push({ output: 'bits against the pipeline without groupSize', actual: bitsGot, expected: bitsWant, tol: SAME_BITS });
        return checks;
      }),
  };
}

const uniform64 = () => advantageBatch('uniform N=64', 1, new Array<number>(8).fill(8), { T: 3, aL: 2, tp: 6, nRoles: 2 });
const variable67 = () => advantageBatch('variable N=67', 2, GROUPS_67, { T: 4, aL: 3, tp: 11, nRoles: 3 });
const variable130 = () => advantageBatch('variable N=130', 3, GROUPS_130, { T: 2, aL: 4, tp: 10, nRoles: 2 });
const extreme67 = () => advantageBatch('extreme N=67', 4, GROUPS_67, { T: 4, aL: 3, tp: 11, nRoles: 3, extreme: true });

export const advantageCases: SelfTestCase[] = [
  advantageCase('N 64: 8 groups of 8 (one workgroup)', uniform64, [
    { estimator: 'group', label: 'group (GRPO as verl)' },
    { estimator: 'group', unbiasedStd: false },
    { estimator: 'group', scaleStd: false, label: 'group, no scaleStd (Dr. GRPO)' },
    { estimator: 'rloo' },
    { estimator: 'raw', byRole: true },
  ]),
  advantageCase('N 67: groups of 1 to 16, 3 padding rows, tp 11', variable67, [
    { estimator: 'group' },
    { estimator: 'group', byRole: true, entropyScale: true },
    { estimator: 'rloo', byRole: true },
    { estimator: 'rloo', entropyScale: true },
    { estimator: 'reinforce' },
    { estimator: 'reinforce', baseline: true, klInReward: 0.3, gamma: 0.9 },
    { estimator: 'turn', gamma: 0.8 },
    { estimator: 'turn', separate: true, entropyScale: true },
    { estimator: 'turnGroup' },
    { estimator: 'turnGroup', unbiasedStd: false },
    { estimator: 'gigpo', gamma: 0.9, stepWeight: 0.5 },
    { estimator: 'opob', isCap: 2, entropyScale: true },
    { estimator: 'opob', scaleStd: false },
  ]),
  advantageCase('N 130: variable groups, 2 padding rows, tp 10', variable130, [
    { estimator: 'turn', separate: true, gamma: 0.8 },
    { estimator: 'gigpo', scaleStd: false },
    { estimator: 'opob', isCap: 1e6 },
  ]),
  advantageCase('groupSize 64 compiled in: 2 groups of 64 (N 128)', () => advantageBatch('groups of 64', 5, [64, 64], { T: 3, aL: 2, tp: 6, nRoles: 2 }), [
    { estimator: 'group', label: 'group (GRPO as verl)' },
    { estimator: 'group', scaleStd: false, unbiasedStd: false },
    { estimator: 'group', byRole: true },
    { estimator: 'reinforce', baseline: true },
    { estimator: 'gigpo', gamma: 0.9 },
    { estimator: 'opob', isCap: 2 },
  ], 64),
  advantageCase('groupSize 8 compiled in, groups of 1 to 16 (N 67)', variable67, [
    { estimator: 'group' },
    { estimator: 'group', byRole: true, unbiasedStd: false },
    { estimator: 'opob', scaleStd: false },
  ], 8),
  advantageCase('extremes: rewards ~1e4, log IS ±1000 (N 67)', extreme67, [
    { estimator: 'group' },
    { estimator: 'rloo', byRole: true },
    { estimator: 'reinforce', baseline: true, klInReward: 0.3, gamma: 0.9 },
    { estimator: 'turn', separate: true },
    { estimator: 'turnGroup' },
    { estimator: 'gigpo', gamma: 0.9, stepWeight: 0.5 },
    { estimator: 'opob', isCap: 1e6, entropyScale: true },
    { estimator: 'opob', isCap: 2 },
  ]),
];
