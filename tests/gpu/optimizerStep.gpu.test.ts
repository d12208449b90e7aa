/**
 * The optimizer step as the backend runs it (kernels/optimizer/adam.ts optimizerStepKernel: gradNorm's two
 * passes, then adam.wgsl, in one compute pass): several steps in one pass with their own gradients
 * and uniforms, held to adamCpu with the float64 norm, at both gradNorm blocks (the thread
 * variant's and the hardware one's); a non-finite norm skips only its own step and sets the
 * gradients bit; a scratch buffer too small for the block sums is refused by name. adam.wgsl and
 * gradNorm alone: adam.gpu.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { adamCpu, GRAD_NORM_BLOCK, GRAD_NORM_BLOCK_HARDWARE, gradNormCpu, gradNormKernel, optimizerStepKernel, type AdamOptions } from '../../kernels/optimizer/adam';
import { createRng } from '../../workers/core/rng';
import { expectClose } from '../helpers/expectClose';
import { dispatch, Scratch } from '../../kernels/selftest/harness';
import { withValidation } from '../helpers/validation';
import { requireGpu } from '../helpers/requireGpu';

type Step = typeof optimizerStepKernel;
type Options = Omit<AdamOptions, 'step'>;

interface Outcome {
  params: number[];
  m: number[];
  v: number[];
  norm: number[];
  health: number;
}

const bits = (x: Float32Array) => Array.from(new Uint32Array(x.buffer, x.byteOffset, x.length));

/** The state after `gradsPerStep.length` steps of `kernel` in one pass, from p0 and zero moments. */
async function run(kernel: Step, p0: Float32Array, gradsPerStep: Float32Array[], o: Options, block: number, lrFactor = 1): Promise<Outcome> {
  const device = await requireGpu();
  const n = p0.length;
  return withValidation(device, async () => {
    const g = new Scratch(device);
    const k = kernel.create(device);
    const params = g.upload(p0);
    const m = g.upload(new Float32Array(n));
    const v = g.upload(new Float32Array(n));
    // NaN bits in the norm and garbage in the scratch: whatever either version reads, it wrote first.
    const norm = g.empty(1);
    const partials = g.upload(new Float32Array(gradNormKernel.scratchWords({ n, block })).fill(123.5));
    const health = g.upload(new Uint32Array(1));
    const lrScale = g.upload(Float32Array.of(1, lrFactor));
    dispatch(
      device,
      gradsPerStep.map((grads, s) => [k, k.bind({ params, grads: g.upload(grads), m, v, partials, norm, health, lrScale }, { ...o, n, block, step: s + 1 })]),
    );
    const out = {
      params: bits(await g.readF32(params, n)),
      m: bits(await g.readF32(m, n)),
      v: bits(await g.readF32(v, n)),
      norm: bits(await g.readF32(norm, 1)),
      health: (await g.readU32(health, 1))[0]!,
    };
    g.destroy();
    k.destroy();
    return out;
  });
}

function gradients(n: number, steps: number, seed: number, scale = 0.5): { p0: Float32Array; grads: Float32Array[] } {
  const rng = createRng(seed);
  const p0 = Float32Array.from({ length: n }, () => rng.normal());
  const grads = Array.from({ length: steps }, () => Float32Array.from({ length: n }, () => rng.normal() * scale));
  return { p0, grads };
}

const BASE: Options = { lr: 0.01, beta1: 0.9, beta2: 0.999, eps: 1e-8, maxGradNorm: 0.5 };
const f32 = (b: number[]) => new Float32Array(Uint32Array.from(b).buffer);

/** Runs the steps on the GPU and holds the outcome to adamCpu with each step's float64 norm. */
async function expectAdamCpu(name: string, p0: Float32Array, grads: Float32Array[], o: Options, block: number, lrFactor = 1): Promise<Outcome> {
  const out = await run(optimizerStepKernel, p0, grads, o, block, lrFactor);
  const n = p0.length;
  const params = Float32Array.from(p0);
  const m = new Float32Array(n);
  const v = new Float32Array(n);
  grads.forEach((g, s) => adamCpu(params, g, m, v, gradNormCpu(g), { ...o, lr: o.lr * lrFactor, step: s + 1 }));
  const tol = { atol: 1e-6, rtol: 1e-5 };
  expectClose(f32(out.params), params, { ...tol, label: `${name}: params` });
  expectClose(f32(out.m), m, { ...tol, label: `${name}: m` });
  expectClose(f32(out.v), v, { ...tol, label: `${name}: v` });
  const last = grads[grads.length - 1]!;
  if (Number.isFinite(gradNormCpu(last))) expectClose(f32(out.norm), [gradNormCpu(last)], { atol: 0, rtol: 2e-6, label: `${name}: the last step's norm` });
  return out;
}

for (const block of [GRAD_NORM_BLOCK, GRAD_NORM_BLOCK_HARDWARE]) describe(`the optimizer step matches adamCpu (gradNorm block ${block})`, () => {
  // One parameter, around the block, the default model's P, and past 256 blocks (pass 2's threads then add two block sums each).
  for (const n of [1, block - 1, block + 1, 9795, 256 * GRAD_NORM_BLOCK_HARDWARE + 3]) {
    it(`n = ${n}: ${Math.ceil(n / block)} blocks, 3 steps in one pass, clipping on`, async () => {
      const { p0, grads } = gradients(n, 3, n);
      expect((await expectAdamCpu(`n=${n}`, p0, grads, BASE, block)).health).toBe(0);
    });
  }
  it('clipping off, other betas and eps, an lr factor of 0.37, 5 steps', async () => {
    const { p0, grads } = gradients(2500, 5, 32);
    await expectAdamCpu('no clip', p0, grads, { lr: 0.003, beta1: 0.5, beta2: 0.9, eps: 1e-6, maxGradNorm: 0 }, block, 0.37);
  });
  for (const bad of [NaN, Infinity, 1e30]) {
    it(`a gradient entry of ${bad}: the step is skipped and the gradients bit set`, async () => {
      const n = 2 * block + 7;
      const { p0, grads } = gradients(n, 1, 34);
      grads[0]![n - 1] = bad;
      const out = await run(optimizerStepKernel, p0, grads, BASE, block);
      expect(out.params).toEqual(bits(p0));
      expect(out.m).toEqual(bits(new Float32Array(n)));
      expect(out.health).toBe(2);
    });
  }
  it('a non-finite step between finite ones skips only itself', async () => {
    const n = block + 9;
    const { p0, grads } = gradients(n, 3, 35);
    grads[1]![3] = NaN;
    const out = await run(optimizerStepKernel, p0, grads, BASE, block);
    const skipped = await run(optimizerStepKernel, p0, [grads[0]!, grads[2]!], BASE, block);
    expect(out.health).toBe(2);
    expect(out.params, 'steps 1 and 3, the third with its own bias corrections').not.toEqual(skipped.params);
    const params = Float32Array.from(p0);
    const m = new Float32Array(n);
    const v = new Float32Array(n);
    grads.forEach((g, s) => adamCpu(params, g, m, v, gradNormCpu(g), { ...BASE, step: s + 1 }));
    expectClose(f32(out.params), params, { atol: 1e-6, rtol: 1e-5, label: 'params after the skip' });
  });
});

describe("the optimizer step's scratch", () => {
  it('three dispatches', () => expect(optimizerStepKernel.dispatches).toBe(3));
  it('a partials buffer smaller than gradNormKernel.scratchWords is refused by name, at bind and update', async () => {
    const device = await requireGpu();
    const g = new Scratch(device);
    {
      const k = optimizerStepKernel.create(device);
      const n = 5 * GRAD_NORM_BLOCK_HARDWARE;
      const buffers = {
        params: g.empty(n), grads: g.empty(n), m: g.empty(n), v: g.empty(n), norm: g.empty(1),
        health: g.empty(1), lrScale: g.empty(2),
      };
      const config = { ...BASE, n, step: 1, block: GRAD_NORM_BLOCK_HARDWARE };
      expect(() => k.bind({ ...buffers, partials: g.empty(4) }, config)).toThrow(/the partials buffer holds 16 bytes, this configuration needs 20 \(gradNormKernel.scratchWords\)/);
      const call = k.bind({ ...buffers, partials: g.empty(5) }, config);
      expect(() => call.update({ ...config, block: 1024 })).toThrow(/the partials buffer holds 20 bytes, this configuration needs 40/);
      k.destroy();
    }
    g.destroy();
  });
});
