/**
 * gradNorm.wgsl (its two passes, gradNormBlocks and gradNormSum, with their fixed-order sums) vs gradNormCpu
 * and adam.wgsl vs adamCpu (kernels/optimizer/adam.ts).
 * gradNorm: rtol 2e-6, unchanged from the one-workgroup kernel. Each block's thread sums are
 * GRAD_NORM_BLOCK / 256 = 32 terms (8 with the hardware block of 2,048), then two 8-level trees
 * and ceil(blocks / 256) terms per thread in pass 2 (4 at 2M entries with the hardware block):
 * about 50 roundings of the sum of squares for n <= 2M, so at most ~25 ulps (1.5e-6) of the norm;
 * the old kernel's n / 256 + 8 ulps grew with n. Two runs give the same bits.
 * Magnitudes: squares are f32, so a norm whose f32 square overflows (entries past ~1.8e19, or a sum
 * past 3.4e38) is +Inf, which adam.wgsl and adamCpu both treat as a skipped step. Entries near
 * 1e-20 have subnormal squares (~1e-40), which WGSL lets an implementation flush to zero: the norm
 * is then 0 (no clipping follows), otherwise it has subnormal precision (rtol 1e-5).
 * adam: params, m and v after each step, rtol 1e-5 and atol 1e-6: every quantity is one or two f32
 * roundings of a float64 expression, and the step lr * m_hat / (sqrt(v_hat) + eps) is bounded by lr.
 * Several steps run in one pass with one uniform per step, as the backend does.
 */
import { describe, expect, it } from 'vitest';
import {
  ADAM_WORKGROUP_SIZE,
  adamCpu,
  adamKernel,
  GRAD_NORM_BLOCK,
  GRAD_NORM_BLOCK_HARDWARE,
  GRAD_NORM_WORKGROUP_SIZE,
  gradNormCpu,
  gradNormKernel,
  type AdamOptions,
} from '../../kernels/optimizer/adam';
import { createRng } from '../../workers/core/rng';
import { expectClose } from '../helpers/expectClose';
import { dispatch, edgeSizes, Scratch } from '../../kernels/selftest/harness';
import { withValidation } from '../helpers/validation';
import { requireGpu } from '../helpers/requireGpu';

const NORM_TOL = { atol: 0, rtol: 2e-6 };

async function gpuNorm(grads: Float32Array, block?: number): Promise<number> {
  const device = await requireGpu();
  const config = { n: grads.length, ...(block ? { block } : {}) };
  return withValidation(device, async () => {
    const g = new Scratch(device);
    const kernel = gradNormKernel.create(device);
    const norm = g.empty(1);
    const partials = g.empty(gradNormKernel.scratchWords(config));
    dispatch(device, [[kernel, kernel.bind({ grads: g.upload(grads), partials, norm }, config)]]);
    const out = (await g.readF32(norm, 1))[0]!;
    g.destroy();
    kernel.destroy();
    return out;
  });
}

/** n seeded normal entries, one in ten scaled by 100 (the sums mix magnitudes). */
function normalGrads(n: number): Float32Array {
  const rng = createRng(n);
  return Float32Array.from({ length: n }, () => rng.normal() * (rng.next() < 0.1 ? 100 : 1));
}

/** n entries of order `scale` (a factor in [0.5, 1) and a sign), seeded. */
function scaledGrads(n: number, scale: number, seed: number): Float32Array {
  const rng = createRng(seed);
  return Float32Array.from({ length: n }, () => (rng.next() < 0.5 ? -1 : 1) * scale * (0.5 + 0.5 * rng.next()));
}

describe('gradNorm (two passes) matches gradNormCpu', () => {
  const B = GRAD_NORM_BLOCK;
  // Workgroup edges, block edges, several blocks, the scale preset's P, and one more block than
  // pass 2 has threads (its threads then add two partials each).
  const sizes = [...edgeSizes(GRAD_NORM_WORKGROUP_SIZE, 5001), B - 1, B, B + 1, 5 * B + 17, 276_504, 256 * B + 1];
  for (const n of sizes) {
    it(`n = ${n} (${Math.ceil(n / B)} blocks)`, async () => {
      const grads = normalGrads(n);
      expectClose([await gpuNorm(grads)], [gradNormCpu(grads)], { ...NORM_TOL, label: `gradNorm n=${n}` });
    });
  }
  it('n = 0: no blocks, the norm is 0', async () => {
    expect(await gpuNorm(new Float32Array(0))).toBe(0);
  });
  it('all zeros give 0, one large entry dominates, and two runs agree bit for bit', async () => {
    expect(await gpuNorm(new Float32Array(300))).toBe(0);
    const g = new Float32Array(777).fill(1e-3);
    g[500] = 1e6;
    expectClose([await gpuNorm(g)], [gradNormCpu(g)], { ...NORM_TOL, label: 'gradNorm dominant' });
    // Every f32 is exactly one double: toBe (Object.is) compares the bits.
    const r = normalGrads(276_504);
    expect(await gpuNorm(r)).toBe(await gpuNorm(r));
  });
  it('entries of 1e+18 stay finite while the f32 sum of squares does (300 of them among 10,257)', async () => {
    const g = normalGrads(5 * B + 17);
    const big = scaledGrads(300, 1e18, 18);
    // Spread over every block, so each block and pass 2 sum large squares.
    big.forEach((x, k) => (g[Math.floor((k * g.length) / big.length)] = x));
    const ref = gradNormCpu(g);
    expect(Number.isFinite(Math.fround(ref * ref))).toBe(true);
    const got = await gpuNorm(g);
    expect(Number.isFinite(got)).toBe(true);
    expectClose([got], [ref], { ...NORM_TOL, label: 'gradNorm 1e18 entries' });
  });
  it('beyond: a sum of squares past the f32 range gives +Inf, where adamCpu skips as well', async () => {
    const g = normalGrads(5 * B + 17);
    for (let k = 0; k < 400; k++) g[k * 25] = 1e18; // 4e38 > 3.4e38
    const ref = gradNormCpu(g);
    expect(Number.isFinite(ref)).toBe(true);
    expect(Math.fround(ref * ref)).toBe(Infinity);
    expect(await gpuNorm(g)).toBe(Infinity);
    // One entry whose own square overflows.
    const one = normalGrads(B + 1);
    one[B] = 2e19;
    expect(await gpuNorm(one)).toBe(Infinity);
  });
  it('entries of 1e-18 (normal squares) match; entries of 1e-20 (subnormal squares) give 0 or subnormal precision', async () => {
    const small = scaledGrads(3 * B + 5, 1e-18, 19);
    expectClose([await gpuNorm(small)], [gradNormCpu(small)], { ...NORM_TOL, label: 'gradNorm 1e-18 entries' });
    const tiny = scaledGrads(3 * B + 5, 1e-20, 20);
    const got = await gpuNorm(tiny);
    const ref = gradNormCpu(tiny);
    console.info(`[gradNorm] 1e-20 entries: gpu ${got}, float64 ${ref} (${got === 0 ? 'subnormals flushed to zero' : 'subnormals kept'})`);
    if (got !== 0) expectClose([got], [ref], { atol: 0, rtol: 1e-5, label: 'gradNorm 1e-20 entries' });
  });
});

describe('gradNorm with the hardware block (GRAD_NORM_BLOCK_HARDWARE, the subgroup variant)', () => {
  const B = GRAD_NORM_BLOCK_HARDWARE;
  // Block edges, the default model's P (5 blocks), the scale preset's (136), and one more block
  // than pass 2 has threads.
  const sizes = [B - 1, B, B + 1, 9795, 276_504, 256 * B + 1];
  for (const n of sizes) {
    it(`n = ${n} (${Math.ceil(n / B)} blocks)`, async () => {
      const grads = normalGrads(n);
      expectClose([await gpuNorm(grads, B)], [gradNormCpu(grads)], { ...NORM_TOL, label: `gradNorm block ${B} n=${n}` });
    });
  }
  it('two runs agree bit for bit; overflow still gives +Inf; a bad block is refused by name', async () => {
    const r = normalGrads(276_504);
    expect(await gpuNorm(r, B)).toBe(await gpuNorm(r, B));
    const one = normalGrads(B + 1);
    one[B] = 2e19;
    expect(await gpuNorm(one, B)).toBe(Infinity);
    await expect(gpuNorm(r, 0.5)).rejects.toThrow(/gradNorm: block 0.5 must be a positive integer/);
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
    const g = new Scratch(device);
    const normK = gradNormKernel.create(device);
    const adamK = adamKernel.create(device);
    const pB = g.upload(p0);
    const mB = g.upload(new Float32Array(n));
    const vB = g.upload(new Float32Array(n));
    const norm = g.empty(1);
    const health = g.upload(new Uint32Array(1));
    const lrScale = g.upload(Float32Array.of(1, scale));
    const partials = g.empty(gradNormKernel.scratchWords({ n }));
    // All steps in one pass: each step has its own gradient buffer, norm call and Adam uniform.
    const items: Parameters<typeof dispatch>[1] = [];
    for (let s = 0; s < steps; s++) {
      const grads = g.upload(gradsPerStep[s]!);
      items.push([normK, normK.bind({ grads, partials, norm }, { n })]);
      items.push([adamK, adamK.bind({ params: pB, grads, m: mB, v: vB, norm, health, lrScale }, { ...o, n, step: s + 1 })]);
    }
    dispatch(device, items);
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
        const g = new Scratch(device);
        const normK = gradNormKernel.create(device);
        const adamK = adamKernel.create(device);
        const pB = g.upload(p0);
        const mB = g.upload(new Float32Array(n));
        const gB = g.upload(grads);
        const norm = g.empty(1);
        const health = g.upload(new Uint32Array(1));
        dispatch(device, [
          [normK, normK.bind({ grads: gB, partials: g.empty(gradNormKernel.scratchWords({ n })), norm }, { n })],
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
