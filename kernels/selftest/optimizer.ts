/**
 * Self-tests of the optimizer kernels (from tests/gpu/adam.gpu.test.ts): gradNorm (gradNorm.wgsl
 * per block of the gradient, then the sum of the blocks) vs gradNormCpu and adam.wgsl vs adamCpu, several
 * Adam steps in one pass as the backend runs them (fed the reference's gradient norms, so a wrong
 * gradNorm fails its own rows, not adam's).
 * Tolerances:
 * - gradNorm: rtol 2e-6, atol 0. The f32 sum of squares is 8 terms per thread, two 8-level trees
 *   and ceil(blocks / 256) terms per thread in pass 2: about 25 roundings for n <= 524,288, a
 *   relative error under 1e-6 of the norm.
 * - adam: atol 1e-6, rtol 1e-5 on params, m and v (lr times the device-side factor lrScale[1]): each is one or two f32 roundings of a float64
 *   expression, and a step lr m_hat / (sqrt(v_hat) + eps) is bounded by lr.
 * - a non-finite gradient norm skips the step: parameters and moments unchanged, health bit 2 set,
 *   exactly.
 */
import { createRng } from '../rng';
import {
  adamCpu,
  adamKernel,
  GRAD_NORM_BLOCK_HARDWARE,
  GRAD_NORM_WORKGROUP_SIZE,
  gradNormBlocks,
  gradNormCpu,
  gradNormKernel,
  gradNormPartialKernel,
  gradNormSumKernel,
  optimizerStepKernel,
  type AdamOptions,
} from '../optimizer/adam';
import { dispatch, exact, joined, withScratch, type SelfTestCase, type Tolerance } from './harness';

const NORM_TOL: Tolerance = { atol: 0, rtol: 2e-6, why: 'f32 sum of squares by blocks, then of the blocks: about 25 ulps' };
const ADAM_TOL: Tolerance = { atol: 1e-6, rtol: 1e-5, why: 'one or two f32 roundings of each float64 expression' };

function gradNormCase(name: string, grads: () => Float32Array, block?: number): SelfTestCase {
  return {
    // Listed under pass 1's pipeline; pass 2 (gradNormSum) is compiled and checked with it.
    kernel: gradNormPartialKernel,
    uses: [gradNormSumKernel],
    name,
    run: (device) =>
      withScratch(device, async (s) => {
        const g = grads();
        const config = { n: g.length, ...(block ? { block } : {}) };
        const k = s.kernel(gradNormKernel.create(device));
        const norm = s.empty(1);
        const partials = s.empty(gradNormKernel.scratchWords(config));
        dispatch(device, [[k, k.bind({ grads: s.upload(g), partials, norm }, config)]]);
        return [{ output: '‖g‖', actual: await s.readF32(norm, 1), expected: [gradNormCpu(g)], tol: NORM_TOL }];
      }),
  };
}

const normalGrads = (n: number) => () => {
  const rng = createRng(n);
  return Float32Array.from({ length: n }, () => rng.normal() * (rng.next() < 0.1 ? 100 : 1));
};

/**
 * Seeded parameters and one gradient per step, and adamCpu's state after the steps, each with the
 * norm `norm` gives its gradient and the learning rate times lrScale.
 */
function adamSteps(n: number, steps: number, seed: number, o: Omit<AdamOptions, 'step'>, norm: (g: Float32Array) => number, lrScale = 1) {
  const rng = createRng(seed);
  const p0 = Float32Array.from({ length: n }, () => rng.normal());
  const gradsPerStep = Array.from({ length: steps }, () => Float32Array.from({ length: n }, () => rng.normal() * 0.5));
  const norms = gradsPerStep.map(norm);
  const params = Float32Array.from(p0);
  const m = new Float32Array(n);
  const v = new Float32Array(n);
  gradsPerStep.forEach((g, t) => adamCpu(params, g, m, v, norms[t]!, { ...o, lr: o.lr * lrScale, step: t + 1 }));
  return { p0, gradsPerStep, norms, params, m, v };
}

/**
 * `steps` Adam steps on n parameters in one pass, each with its own gradient, norm and uniform. The
 * norm is the reference's, uploaded, so that this case tests adam.wgsl alone (gradNorm has its own).
 */
function adamCase(name: string, n: number, steps: number, o: Omit<AdamOptions, 'step'>, seed: number, lrScale = 1): SelfTestCase {
  return {
    kernel: adamKernel,
    name,
    run: (device) =>
      withScratch(device, async (s) => {
        const { p0, gradsPerStep, norms, params, m, v } = adamSteps(n, steps, seed, o, (g) => Math.fround(gradNormCpu(g)), lrScale);

        const adamK = s.kernel(adamKernel.create(device));
        const pB = s.upload(p0);
        const mB = s.upload(new Float32Array(n));
        const vB = s.upload(new Float32Array(n));
        const health = s.upload(new Uint32Array(1));
        const scale = s.upload(Float32Array.of(1, lrScale)); // [2]: the lr factor read on the device is [1]
        const items: Parameters<typeof dispatch>[1] = [];
        for (let t = 0; t < steps; t++) {
          const grads = s.upload(gradsPerStep[t]!);
          const norm = s.upload(Float32Array.of(norms[t]!));
          items.push([adamK, adamK.bind({ params: pB, grads, m: mB, v: vB, norm, health, lrScale: scale }, { ...o, n, step: t + 1 })]);
        }
        dispatch(device, items);
        const got = joined(await s.readF32(pB, n), await s.readF32(mB, n), await s.readF32(vB, n));
        return [
          { output: 'params, m, v', actual: got, expected: joined(params, m, v), tol: ADAM_TOL },
          { output: 'health word', actual: await s.readU32(health, 1), expected: [0], tol: exact('a finite step sets no health bit') },
        ];
      }),
  };
}

const BASE = { lr: 0.01, beta1: 0.9, beta2: 0.999, eps: 1e-8 };

/**
 * One step whose gradient holds `bad`: skipped by both sides, health bit 2 set on the GPU. The
 * whole step runs (gradNorm's two dispatches, then adam), as in training: 1e30 is finite, but its
 * f32 square is not, and that norm is what makes Adam skip.
 */
function adamSkipCase(bad: number): SelfTestCase {
  return {
    kernel: adamKernel,
    uses: optimizerStepKernel.kernels.filter((k) => k !== adamKernel),
    name: `a gradient of ${bad}: the step is skipped`,
    run: (device) =>
      withScratch(device, async (s) => {
        const n = 70;
        const rng = createRng(4);
        const p0 = Float32Array.from({ length: n }, () => rng.normal());
        const grads = Float32Array.from({ length: n }, () => rng.normal());
        grads[33] = bad;
        const ref = Float32Array.from(p0);
        const mRef = new Float32Array(n);
        const stepped = adamCpu(ref, grads, mRef, new Float32Array(n), gradNormCpu(grads), { ...BASE, maxGradNorm: 1, step: 1 });
        const k = s.kernel(optimizerStepKernel.create(device));
        const pB = s.upload(p0);
        const mB = s.upload(new Float32Array(n));
        const health = s.upload(new Uint32Array(1));
        const config = { ...BASE, maxGradNorm: 1, n, step: 1 };
        const buffers = {
          params: pB, grads: s.upload(grads), m: mB, v: s.upload(new Float32Array(n)), norm: s.empty(1), health,
          partials: s.empty(gradNormKernel.scratchWords(config)), lrScale: s.upload(Float32Array.of(1, 1)),
        };
        dispatch(device, [[k, k.bind(buffers, config)]]);
        const got = joined(await s.readF32(pB, n), await s.readF32(mB, n), await s.readU32(health, 1));
        return [
          {
            output: 'params, m, health',
            actual: got,
            expected: joined(ref, mRef, [stepped ? 0 : 2]),
            tol: exact('a non-finite gradient norm must leave parameters and moments untouched and set health bit 2'),
          },
        ];
      }),
  };
}

export const optimizerCases: SelfTestCase[] = [
  gradNormCase(`n ${GRAD_NORM_WORKGROUP_SIZE + 1}`, normalGrads(GRAD_NORM_WORKGROUP_SIZE + 1)),
  gradNormCase(`n 5001: ${gradNormBlocks(5001)} blocks, the last one short`, normalGrads(5001)),
  gradNormCase(
    `n 9795 in blocks of ${GRAD_NORM_BLOCK_HARDWARE} (the hardware variant's): ${gradNormBlocks(9795, GRAD_NORM_BLOCK_HARDWARE)} blocks`,
    normalGrads(9795),
    GRAD_NORM_BLOCK_HARDWARE,
  ),
  gradNormCase('one entry of 1e6 among 1e-3', () => {
    const g = new Float32Array(777).fill(1e-3);
    g[500] = 1e6;
    return g;
  }),
  gradNormCase('all zeros', () => new Float32Array(300)),

  adamCase('n 65, 3 steps in one pass, clipping on', 65, 3, { ...BASE, maxGradNorm: 0.5 }, 65),
  adamCase('n 5001, 3 steps, clipping on', 5001, 3, { ...BASE, maxGradNorm: 0.5 }, 5001),
  adamCase('clipping off, 5 steps, beta1 0.5, beta2 0.9, eps 1e-6', 200, 5, { lr: 0.003, beta1: 0.5, beta2: 0.9, eps: 1e-6, maxGradNorm: 0 }, 77),
  adamCase('learning rate scaled by 0.37 on the device (lrScale)', 100, 2, { ...BASE, maxGradNorm: 1 }, 79, 0.37),
  ...[NaN, Infinity, 1e30].map((bad) => adamSkipCase(bad)),
];
