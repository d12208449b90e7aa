/**
 * ppoLoss.wgsl seqRatio vs seqRatioCpu (kernels/loss/seqRatio.ts), in its three modes, over whole batches and
 * minibatches (rowBase != 0, outputs at absolute trajectories). Tolerances:
 * - log-ratios of order 1: atol 1e-6, rtol 1e-5. The GPU takes logp - logpOld in f32 (half an ulp
 *   of |logp| <= ~10, ~5e-7) and sums at most Tp = 6 terms in f32 (a few ulps of the sum); the
 *   reference works in f64 on the same f32 inputs.
 * - log-ratios past the +-20 clamp (|logp| up to ~60): atol 2e-5, since each f32 difference is off by
 *   up to half an ulp of 64 (3.8e-6) and each partial sum (up to 6 * 20) by half an ulp of 128; the
 *   mean divides the total by the count.
 * Entries the call does not own must keep their previous contents (written NaN here), and an empty
 * segment must be exactly 0.
 */
import { describe, expect, it } from 'vitest';
import { seqRatioCpu, seqRatioKernel, seqRatioSegments, type SeqRatioMode, type SeqRatioOptions } from '../../kernels/loss/seqRatio';
import { compileKernels } from '../../kernels/pipeline';
import { expectClose } from '../helpers/expectClose';
import { dispatch, Scratch } from '../../kernels/selftest/harness';
import { withValidation } from '../helpers/validation';
import { requireGpu } from '../helpers/requireGpu';
import { RATIO_ACTION_LEN, RATIO_TP, RATIO_TURNS, seqRatioInputs as inputs, type SeqRatioInputs } from '../../kernels/selftest/fixtures';

const TP = RATIO_TP;
const ACTION_LEN = RATIO_ACTION_LEN;
const TURNS = RATIO_TURNS;

async function check(inp: SeqRatioInputs, o: Omit<SeqRatioOptions, 'tp'>, name: string, rowTraj = [0, inp.logp.length / TP], atol = 1e-6) {
  const device = await requireGpu();
  const N = inp.logp.length / TP;
  const [n0, n1] = rowTraj as [number, number];
  const opts: SeqRatioOptions = { ...o, tp: TP, actionLen: ACTION_LEN, maxTurns: TURNS, rowBase: n0 * TP };
  const S = seqRatioSegments(opts);
  const sub = (a: Float32Array) => a.subarray(n0 * TP, n1 * TP);
  const ref = new Float32Array(N * S).fill(NaN);
  seqRatioCpu(sub(inp.mask), sub(inp.logp), sub(inp.logpOld), sub(inp.adv), opts, ref);
  const got = await withValidation(device, async () => {
    await compileKernels(device, [seqRatioKernel]);
    const g = new Scratch(device);
    const kernel = seqRatioKernel.create(device);
    const out = g.empty(N * S);
    const call = kernel.bind(
      { mask: g.upload(inp.mask), logp: g.upload(inp.logp), logpOld: g.upload(inp.logpOld), adv: g.upload(inp.adv), out },
      { ...opts, numRows: (n1 - n0) * TP },
    );
    dispatch(device, [[kernel, call]]);
    const res = await g.readF32(out, N * S);
    g.destroy();
    kernel.destroy();
    return res;
  });
  expectClose(got, ref, { atol, rtol: 1e-5, label: `seqRatio ${name}` });
  for (let i = 0; i < ref.length; i++) {
    if (ref[i] === 0) expect(got[i], `${name}: out[${i}] is exactly 0`).toBe(0);
  }
  return ref;
}

const MODES: Array<[SeqRatioMode, Omit<SeqRatioOptions, 'tp'>]> = [
  ['sequence', { mode: 'sequence' }],
  ['turn', { mode: 'turn' }],
  ['geometric', { mode: 'geometric', clipLow: 0.2, clipHigh: 0.25 }],
];

describe('ppoLoss.wgsl seqRatio matches seqRatioCpu', () => {
  for (const [name, o] of MODES) {
    for (const N of [1, 23, 70]) {
      it(`${name}, N = ${N}`, async () => {
        const ref = await check(inputs(N, N * 7 + name.length), o, `${name} N=${N}`);
        if (N > 1) expect(ref.some((x) => x === 0) && ref.some((x) => x !== 0)).toBe(true);
      });
    }
    it(`${name}, minibatch of trajectories 9..32 of 40 (rowBase != 0)`, async () => {
      const ref = await check(inputs(40, 41), o, `${name} minibatch`, [9, 32]);
      expect(Number.isNaN(ref[0]!) && Number.isNaN(ref[ref.length - 1]!)).toBe(true);
    });
    it(`${name}, log-ratios past the +-20 clamp`, async () => {
      await check(inputs(30, 42, 15), o, `${name} past clamp`, undefined, 2e-5);
    });
  }
  it('geometric: the clip changes the result (lambda* differs from lambda somewhere)', async () => {
    const inp = inputs(23, 43, 0.5);
    const geo = await check(inp, { mode: 'geometric', clipLow: 0.1, clipHigh: 0.1 }, 'geometric tight');
    const plain = seqRatioCpu(inp.mask, inp.logp, inp.logpOld, inp.adv, { mode: 'sequence', tp: TP });
    expect(geo.some((x, n) => Math.abs(x - plain[n]!) > 1e-3)).toBe(true);
  });
});
