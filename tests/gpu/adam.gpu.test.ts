/**
 * gradNorm.wgsl vs gradNormCpu and adam.wgsl vs adamCpu (kernels/adam.ts).
 * gradNorm: rtol 2e-6; an f32 strided-then-tree sum of n squares has a relative error of about
 * (n / 256 + log2 256) ulps, under 1e-6 for n <= 5000.
 * adam: params, m and v after each step, rtol 1e-5 and atol 1e-6: every quantity is one or two f32
 * roundings of a float64 expression, and the step lr * m_hat / (sqrt(v_hat) + eps) is bounded by lr.
 * Several steps run in one pass with one uniform per step, as the backend does.
 */
import { describe, expect, it } from 'vitest';
import {
  ADAM_WORKGROUP_SIZE,
  adamCpu,
  adamKernel,
  GRAD_NORM_WORKGROUP_SIZE,
  gradNormCpu,
  gradNormKernel,
  type AdamOptions,
} from '../../kernels/adam';
import { createRng } from '../../workers/rng';
import { expectClose } from '../helpers/expectClose';
import { GpuScratch, runCalls, withValidation } from '../helpers/gpuBuffers';
import { edgeSizes } from '../helpers/mlpFixture';
import { requireGpu } from '../helpers/requireGpu';

async function gpuNorm(grads: Float32Array): Promise<number> {
  const device = await requireGpu();
  return withValidation(device, async () => {
    const g = new GpuScratch(device);
    const kernel = gradNormKernel.create(device);
    const norm = g.empty(1);
    runCalls(device, [[kernel, kernel.bind({ grads: g.upload(grads), norm }, { n: grads.length })]]);
    const out = (await g.readF32(norm, 1))[0]!;
    g.destroy();
    kernel.destroy();
    return out;
  });
}

describe('gradNorm.wgsl matches gradNormCpu', () => {
  for (const n of edgeSizes(GRAD_NORM_WORKGROUP_SIZE, 5001)) {
    it(`n = ${n}`, async () => {
      const rng = createRng(n);
      const grads = Float32Array.from({ length: n }, () => rng.normal() * (rng.next() < 0.1 ? 100 : 1));
      expectClose([await gpuNorm(grads)], [gradNormCpu(grads)], { atol: 0, rtol: 2e-6, label: `gradNorm n=${n}` });
    });
  }
  it('all zeros give 0, one large entry dominates, and two runs agree bit for bit', async () => {
    expect(await gpuNorm(new Float32Array(300))).toBe(0);
    const g = new Float32Array(777).fill(1e-3);
    g[500] = 1e6;
    expectClose([await gpuNorm(g)], [gradNormCpu(g)], { atol: 0, rtol: 2e-6, label: 'gradNorm dominant' });
    const rng = createRng(9);
    const r = Float32Array.from({ length: 3000 }, () => rng.normal());
    expect(await gpuNorm(r)).toBe(await gpuNorm(r));
  });
});

async function checkAdam(n: number, steps: number, o: Omit<AdamOptions, 'step'>, seed: number, scale = 1) {
  const device = await requireGpu();
  const rng = createRng(seed);
  const p0 = Float32Array.from({ length: n }, () => rng.normal());
  const gradsPerStep = Array.from({ length: steps }, () => Float32Array.from({ length: n }, () => rng.normal() * 0.5));
  // Reference: steps 1..steps with the float64 norm of each step's gradient.
  const params = Float32Array.from(p0);
  const m = new Float32Array(n);
  const v = new Float32Array(n);
  for (let s = 0; s < steps; s++) adamCpu(params, gradsPerStep[s]!, m, v, gradNormCpu(gradsPerStep[s]!), { ...o, lr: o.lr * scale, step: s + 1 });

  const got = await withValidation(device, async () => {
    const g = new GpuScratch(device);
    const normK = gradNormKernel.create(device);
    const adamK = adamKernel.create(device);
    const pB = g.upload(p0);
    const mB = g.upload(new Float32Array(n));
    const vB = g.upload(new Float32Array(n));
    const norm = g.empty(1);
    const health = g.upload(new Uint32Array(1));
    const lrScale = g.upload(Float32Array.of(1, scale));
    // All steps in one pass: each step has its own gradient buffer, norm call and Adam uniform.
    const items: Parameters<typeof runCalls>[1] = [];
    for (let s = 0; s < steps; s++) {
      const grads = g.upload(gradsPerStep[s]!);
      items.push([normK, normK.bind({ grads, norm }, { n })]);
      items.push([adamK, adamK.bind({ params: pB, grads, m: mB, v: vB, norm, health, lrScale }, { ...o, n, step: s + 1 })]);
    }
    runCalls(device, items);
    const out = { params: await g.readF32(pB, n), m: await g.readF32(mB, n), v: await g.readF32(vB, n), health: (await g.readU32(health, 1))[0] };
    g.destroy();
    normK.destroy();
    adamK.destroy();
    return out;
  });
  const name = `n=${n} steps=${steps} clip=${o.maxGradNorm}`;
  const tol = { atol: 1e-6, rtol: 1e-5 };
  expectClose(got.params, params, { ...tol, label: `adam params ${name}` });
  expectClose(got.m, m, { ...tol, label: `adam m ${name}` });
  expectClose(got.v, v, { ...tol, label: `adam v ${name}` });
  expect(got.health).toBe(0);
}

const BASE = { lr: 0.01, beta1: 0.9, beta2: 0.999, eps: 1e-8 };

describe('adam.wgsl matches adamCpu', () => {
  for (const n of edgeSizes(ADAM_WORKGROUP_SIZE, 5001)) {
    it(`n = ${n}, 3 steps in one pass, clipping on`, async () => checkAdam(n, 3, { ...BASE, maxGradNorm: 0.5 }, n));
  }
  it('clipping off, 5 steps, other betas and eps', async () =>
    checkAdam(200, 5, { lr: 0.003, beta1: 0.5, beta2: 0.9, eps: 1e-6, maxGradNorm: 0 }, 77));
  it('a clip threshold above the norm leaves the gradient alone', async () =>
    checkAdam(100, 2, { ...BASE, maxGradNorm: 1e6 }, 78));
  it('the lr factor read from the device (VCPO ESS scaling) multiplies the step', async () =>
    checkAdam(300, 3, { ...BASE, maxGradNorm: 1 }, 79, 0.37));
});

describe('adam.wgsl skips a step whose gradient norm is not finite', () => {
  for (const bad of [NaN, Infinity, 1e30]) {
    it(`a gradient of ${bad}: parameters and moments unchanged, gradients bit set, as adamCpu`, async () => {
      const device = await requireGpu();
      const n = 70;
      const rng = createRng(4);
      const p0 = Float32Array.from({ length: n }, () => rng.normal());
      const grads = Float32Array.from({ length: n }, () => rng.normal());
      grads[33] = bad;
      const ref = Float32Array.from(p0);
      expect(adamCpu(ref, grads, new Float32Array(n), new Float32Array(n), gradNormCpu(grads), { ...BASE, maxGradNorm: 1, step: 1 })).toBe(false);
      const got = await withValidation(device, async () => {
        const g = new GpuScratch(device);
        const normK = gradNormKernel.create(device);
        const adamK = adamKernel.create(device);
        const pB = g.upload(p0);
        const mB = g.upload(new Float32Array(n));
        const gB = g.upload(grads);
        const norm = g.empty(1);
        const health = g.upload(new Uint32Array(1));
        runCalls(device, [
          [normK, normK.bind({ grads: gB, norm }, { n })],
          [adamK, adamK.bind({ params: pB, grads: gB, m: mB, v: g.upload(new Float32Array(n)), norm, health, lrScale: g.upload(Float32Array.of(1, 1)) }, { ...BASE, maxGradNorm: 1, n, step: 1 })],
        ]);
        const out = { params: await g.readF32(pB, n), m: await g.readF32(mB, n), health: (await g.readU32(health, 1))[0] };
        g.destroy();
        normK.destroy();
        adamK.destroy();
        return out;
      });
      expect(Array.from(got.params)).toEqual(Array.from(ref));
      expect(Array.from(got.m)).toEqual(new Array(n).fill(0));
      expect(got.health).toBe(2);
    });
  }
});
