/**
 * Self-test of negOutShare.wgsl against negOutShareCpu (from tests/gpu/negOutShare.gpu.test.ts): the
 * share of |dlogp| on negative-advantage tokens whose log-ratio is outside [log 0.8, log 1.2]. The
 * kernel sums in f32 over at most ceil(rows / 256) rows a thread and then a tree of 8 levels, the
 * reference in float64: both sums are of non-negative terms, so each is off by at most about
 * (rows / 256 + 8) f32 roundings relative, and the share by twice that; 1e-5 absolute covers the
 * cases here (at most 40 rows a thread: 2 x 48 x 6e-8 < 6e-6).
 */
import { createRng } from '../rng';
import { NEG_OUT_LOG_BOUNDS, NEG_OUT_WORKGROUP_SIZE, negOutShareCpu, negOutShareKernel, type NegOutInput } from '../stats/negOutShare';
import { dispatch, withScratch, type SelfTestCase, type Tolerance } from './harness';

export const NEG_OUT_TOL: Tolerance = { atol: 1e-5, rtol: 0, why: 'f32 sums of non-negative terms over <= 40 rows a thread and an 8-level tree, against float64' };

export interface NegOutData {
  mask: Float32Array;
  adv: Float32Array;
  logp: Float32Array;
  logpOld: Float32Array;
  dlogp: Float32Array;
}

/**
 * `rows` rows, seeded: a quarter masked out, advantages of both signs and some exact zeros,
 * log-ratios spread over [-0.6, 0.6] with some exactly at the bounds, gradients of both signs
 * across four orders of magnitude.
 */
export function negOutInputs(rows: number, seed = rows): NegOutData {
  const rng = createRng(seed * 31 + 7);
  const x: NegOutData = { mask: new Float32Array(rows), adv: new Float32Array(rows), logp: new Float32Array(rows), logpOld: new Float32Array(rows), dlogp: new Float32Array(rows) };
  for (let i = 0; i < rows; i++) {
    x.mask[i] = rng.next() < 0.75 ? 1 : 0;
    x.adv[i] = i % 11 === 0 ? 0 : rng.next() * 4 - 2;
    x.logpOld[i] = -rng.next() * 3;
    const lam = i % 13 === 0 ? NEG_OUT_LOG_BOUNDS[i % 2]! : rng.next() * 1.2 - 0.6;
    x.logp[i] = x.logpOld[i]! + lam;
    x.dlogp[i] = (rng.next() - 0.5) * 10 ** (rng.int(4) - 3);
  }
  return x;
}

/** The share negOutShare.wgsl writes. */
export async function gpuNegOutShare(device: GPUDevice, x: NegOutInput & NegOutData): Promise<number> {
  return withScratch(device, async (s) => {
    const k = s.kernel(negOutShareKernel.create(device));
    const out = s.empty(1);
    dispatch(device, [[k, k.bind({ mask: s.upload(x.mask), adv: s.upload(x.adv), logp: s.upload(x.logp), logpOld: s.upload(x.logpOld), dlogp: s.upload(x.dlogp), out }, { numRows: x.mask.length })]]);
    return (await s.readF32(out, 1))[0]!;
  });
}

function shareCase(name: string, inputs: () => NegOutData): SelfTestCase {
  return {
    kernel: negOutShareKernel,
    name,
    run: async (device) => {
      const x = inputs();
      return [{ output: 'share', actual: [await gpuNegOutShare(device, x)], expected: [negOutShareCpu(x)], tol: NEG_OUT_TOL }];
    },
  };
}

const W = NEG_OUT_WORKGROUP_SIZE;

export const negOutShareCases: SelfTestCase[] = [
  shareCase(`${W + 1} rows: mixed signs, masks, rows at the bounds`, () => negOutInputs(W + 1)),
  shareCase('10,000 rows', () => negOutInputs(10_000)),
  shareCase('every row masked out: 0', () => {
    const x = negOutInputs(300);
    x.mask.fill(0);
    return x;
  }),
];
