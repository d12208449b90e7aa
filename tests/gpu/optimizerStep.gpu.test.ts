/**
 * The optimizer step in two dispatches (kernels/adam.ts optimizerStepMergedKernel: gradNorm's
 * pass 1, then adamMerged.wgsl, gradNormSum's tree in every workgroup of the update) gives the three
 * dispatches' results bit for bit. The shared pieces are what makes the bits equal, and what these
 * tests hold to it: gradNormTree.wgsl (the fixed-order sums of gradNorm.wgsl, gradNormSum.wgsl and
 * adamMerged.wgsl) and adamStep.wgsl (the uniform and the update of one parameter, adam.wgsl's and
 * adamMerged.wgsl's). What is compared: params, m, v, the norm written for the readback and the
 * health bits, after several steps in one pass with their own gradients and uniforms, as the
 * backend runs them; at parameter counts around adamMerged's workgroup (1,024 parameters) and the
 * block, with more blocks than the tree has threads (block 1), clipping on and off, an lr factor,
 * and norms that are not finite (the step skipped, the gradients bit set). The three dispatches'
 * agreement with adamCpu is adam.gpu.test.ts's; one case here checks the two against adamCpu too.
 * The hardware variant's step since 2026-12-01 is adamMerged alone, its block sums written by
 * firstLayerGradSubgroup: a different order of the same squares, so its norm is held to gradNorm's
 * within 2e-6 and to the float64 norm, and its run-to-run bits to themselves.
 */
import { describe, expect, it } from 'vitest';
import {
  ADAM_MERGED_PARAMS,
  adamCpu,
  GRAD_NORM_BLOCK,
  GRAD_NORM_BLOCK_HARDWARE,
  gradNormCpu,
  gradNormKernel,
  optimizerStepFor,
  optimizerStepKernel,
  optimizerStepFusedKernel,
  optimizerStepMergedKernel,
  type AdamOptions,
} from '../../kernels/adam';
import { firstLayerGradKernels, firstLayerGradSubgroupWorkgroups, paramLayout, type MlpDims } from '../../kernels/mlp';
import { createRng } from '../../workers/rng';
import { expectClose, expectEqualArrays } from '../helpers/expectClose';
import { GpuScratch, runCalls, withValidation } from '../helpers/gpuBuffers';
import { backwardSetup } from '../helpers/mlpFixture';
import { requireFeature, requireGpu } from '../helpers/requireGpu';

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
    const g = new GpuScratch(device);
    const k = kernel.create(device);
    const params = g.upload(p0);
    const m = g.upload(new Float32Array(n));
    const v = g.upload(new Float32Array(n));
    // NaN bits in the norm and garbage in the scratch: whatever either version reads, it wrote first.
    const norm = g.empty(1);
    const partials = g.upload(new Float32Array(gradNormKernel.scratchWords({ n, block })).fill(123.5));
    const health = g.upload(new Uint32Array(1));
    const lrScale = g.upload(Float32Array.of(1, lrFactor));
    runCalls(
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

async function expectSameBits(name: string, p0: Float32Array, grads: Float32Array[], o: Options, block: number, lrFactor = 1): Promise<Outcome> {
  const three = await run(optimizerStepKernel, p0, grads, o, block, lrFactor);
  const two = await run(optimizerStepMergedKernel, p0, grads, o, block, lrFactor);
  for (const key of ['params', 'm', 'v', 'norm'] as const) expectEqualArrays(two[key], three[key], `${name}: ${key} (bits)`);
  expect(two.health, `${name}: health`).toBe(three.health);
  return two;
}

const BASE: Options = { lr: 0.01, beta1: 0.9, beta2: 0.999, eps: 1e-8, maxGradNorm: 0.5 };
const W = ADAM_MERGED_PARAMS;

describe('the optimizer step in two dispatches: the three dispatches\' bits', () => {
  const B = GRAD_NORM_BLOCK_HARDWARE;
  // One parameter, around adamMerged's workgroup, around the block, the default model's P, and
  // past 256 blocks of the hardware block (pass 2's threads then add two block sums each).
  const sizes = [1, W - 1, W, W + 1, B - 1, B + 1, 9795, 256 * B + 3];
  for (const n of sizes) {
    it(`n = ${n}: ${Math.ceil(n / W)} workgroups, ${Math.ceil(n / B)} blocks, 3 steps, clipping on`, async () => {
      const { p0, grads } = gradients(n, 3, n);
      const out = await expectSameBits(`n=${n}`, p0, grads, BASE, B);
      expect(out.health).toBe(0);
    });
  }
  it('block 1: more blocks than the tree has threads, with the thread variant\'s block too', async () => {
    const { p0, grads } = gradients(3000, 2, 31);
    await expectSameBits('block 1', p0, grads, BASE, 1);
    await expectSameBits(`block ${GRAD_NORM_BLOCK}`, p0, grads, BASE, GRAD_NORM_BLOCK);
  });
  it('clipping off, other betas and eps, an lr factor of 0.37, 5 steps', async () => {
    const { p0, grads } = gradients(2500, 5, 32);
    await expectSameBits('no clip', p0, grads, { lr: 0.003, beta1: 0.5, beta2: 0.9, eps: 1e-6, maxGradNorm: 0 }, B, 0.37);
  });
  it('matches adamCpu with the float64 norm (adam.gpu.test.ts\'s tolerance: rtol 1e-5, atol 1e-6)', async () => {
    const n = 3 * W + 5;
    const { p0, grads } = gradients(n, 3, 33);
    const out = await run(optimizerStepMergedKernel, p0, grads, BASE, B);
    const params = Float32Array.from(p0);
    const m = new Float32Array(n);
    const v = new Float32Array(n);
    grads.forEach((g, s) => adamCpu(params, g, m, v, gradNormCpu(g), { ...BASE, step: s + 1 }));
    const f32 = (b: number[]) => new Float32Array(Uint32Array.from(b).buffer);
    const tol = { atol: 1e-6, rtol: 1e-5 };
    expectClose(f32(out.params), params, { ...tol, label: 'merged params' });
    expectClose(f32(out.m), m, { ...tol, label: 'merged m' });
    expectClose(f32(out.v), v, { ...tol, label: 'merged v' });
    expectClose(f32(out.norm), [gradNormCpu(grads[2]!)], { atol: 0, rtol: 2e-6, label: 'merged norm (the last step\'s)' });
  });
  for (const bad of [NaN, Infinity, 1e30]) {
    it(`a gradient entry of ${bad}: the step is skipped in every workgroup and the gradients bit set`, async () => {
      const n = 2 * W + 7;
      const { p0, grads } = gradients(n, 1, 34);
      grads[0]![n - 1] = bad;
      const out = await expectSameBits(`entry ${bad}`, p0, grads, BASE, B);
      expect(out.params).toEqual(bits(p0));
      expect(out.m).toEqual(bits(new Float32Array(n)));
      expect(out.health).toBe(2);
    });
  }
  it('a non-finite step between finite ones skips only itself', async () => {
    const n = W + 9;
    const { p0, grads } = gradients(n, 3, 35);
    grads[1]![3] = NaN;
    const out = await expectSameBits('NaN in step 2 of 3', p0, grads, BASE, B);
    expect(out.health).toBe(2);
  });
});

describe("the fused step: firstLayerGradSubgroup's block sums, then adamMerged alone", () => {
  const DEFAULT: MlpDims = { V: 19, K: 8, D: 16, H: 64 }; // the app's default model: 9,795 parameters

  /**
   * firstLayerGradSubgroup over a gradient whose W2 | b2 range is `head`, then `step` in the same
   * pass, as the backend records an optimizer step. Returns the gradient the kernel left and the state.
   */
  async function chain(step: Step, head: Float32Array, seed: number, spoil = false, o: Options = BASE, dims = DEFAULT) {
    const L = paramLayout(dims);
    const blocks = firstLayerGradSubgroupWorkgroups(dims);
    const device = await requireGpu();
    requireFeature(device, 'subgroups');
    const { c, G } = backwardSetup(dims, 120, seed);
    const G32 = Float32Array.from(G);
    if (spoil) G32[5] = NaN;
    return withValidation(device, async () => {
      const g = new GpuScratch(device);
      const first = firstLayerGradKernels.subgroup.create(device);
      const k = step.create(device);
      const params = g.upload(c.params);
      const grads = g.upload(head);
      const partials = g.upload(new Float32Array(Math.max(blocks, gradNormKernel.scratchWords({ n: L.size, block: GRAD_NORM_BLOCK_HARDWARE }))).fill(123.5));
      const [m, v, norm, health] = [g.upload(new Float32Array(L.size)), g.upload(new Float32Array(L.size)), g.empty(1), g.upload(new Uint32Array(1))];
      const config = { ...o, n: L.size, step: 1, ...(step === optimizerStepFusedKernel ? { blocks } : { block: GRAD_NORM_BLOCK_HARDWARE }) };
      runCalls(device, [
        [first, first.bind({ params: g.upload(c.params), G: g.upload(G32), grads, partials }, { dims })],
        [k, k.bind({ params, grads, m, v, partials, norm, health, lrScale: g.upload(Float32Array.of(1, 1)) }, config)],
      ]);
      const out = {
        grad: await g.readF32(grads, L.size),
        params: await g.readF32(params, L.size),
        norm: (await g.readF32(norm, 1))[0]!,
        health: (await g.readU32(health, 1))[0]!,
        p0: c.params,
      };
      g.destroy();
      first.destroy();
      k.destroy();
      return out;
    });
  }

  const head = (scale: number, dims = DEFAULT) => {
    const L = paramLayout(dims);
    const rng = createRng(77);
    return Float32Array.from({ length: L.size }, (_, i) => (i >= L.w2 ? rng.normal() * scale : 0));
  };

  it("matches adamCpu with the float64 norm of the gradient the kernel wrote, clipping on and off; 1,204 block sums at H = 512", async () => {
    // A norm of ~175 against maxGradNorm 0.5 (clipped), and clipping switched off; at H = 512 more
    // block sums than four a thread of adamMerged (sumBlocks' loads in fours).
    const big: MlpDims = { ...DEFAULT, H: 512 };
    expect(firstLayerGradSubgroupWorkgroups(big)).toBeGreaterThan(4 * 256);
    for (const [scale, o, dims] of [[5, BASE, DEFAULT], [1, { ...BASE, maxGradNorm: 0 }, DEFAULT], [1, BASE, big]] as const) {
      const L = paramLayout(dims);
      const out = await chain(optimizerStepFusedKernel, head(scale, dims), 3, false, o, dims);
      const norm = gradNormCpu(out.grad);
      if (o.maxGradNorm > 0) expect(norm).toBeGreaterThan(10 * o.maxGradNorm);
      expect(Math.abs(out.norm - norm) / norm, `norm, head scale ${scale}`).toBeLessThan(2e-6);
      const params = Float32Array.from(out.p0);
      adamCpu(params, out.grad, new Float32Array(L.size), new Float32Array(L.size), norm, { ...o, step: 1 });
      expectClose(out.params, params, { atol: 1e-6, rtol: 1e-5, label: `fused params, maxGradNorm ${o.maxGradNorm}, H ${dims.H}` });
      expect(out.health).toBe(0);
    }
  });

  it("the same norm as gradNorm's own pass over that gradient (optimizerStepMerged), up to the order of the sums", async () => {
    const fused = await chain(optimizerStepFusedKernel, head(1), 4);
    const merged = await chain(optimizerStepMergedKernel, head(1), 4);
    expectEqualArrays(fused.grad, merged.grad, 'the gradient firstLayerGradSubgroup left');
    expect(Math.abs(fused.norm - merged.norm) / merged.norm).toBeLessThan(2e-6);
    expect(fused.params.every(Number.isFinite)).toBe(true);
    expectClose(fused.params, merged.params, { atol: 1e-6, rtol: 1e-5, label: 'params after the two steps' });
  });

  it('the same bits on every run; a NaN slot sum skips the step and sets the gradients bit', async () => {
    const [a, b] = [await chain(optimizerStepFusedKernel, head(1), 5), await chain(optimizerStepFusedKernel, head(1), 5)];
    expectEqualArrays(Float32Array.of(a.norm), Float32Array.of(b.norm), 'two runs: the norm');
    expectEqualArrays(a.params, b.params, 'two runs: the params');
    const bad = await chain(optimizerStepFusedKernel, head(1), 5, true);
    expect(Number.isFinite(bad.norm)).toBe(false);
    expectEqualArrays(bad.params, bad.p0, 'params of a skipped step');
    expect(bad.health).toBe(2);
  });
});

describe('which optimizer step a variant runs, and its scratch', () => {
  it('one dispatch in the subgroup variant (its block sums from firstLayerGradSubgroup), three in the thread one', () => {
    expect(optimizerStepFor('subgroup')).toBe(optimizerStepFusedKernel);
    expect(optimizerStepFor('thread')).toBe(optimizerStepKernel);
    expect([optimizerStepFusedKernel.dispatches, optimizerStepMergedKernel.dispatches, optimizerStepKernel.dispatches]).toEqual([1, 2, 3]);
  });
  it('a partials buffer smaller than gradNormKernel.scratchWords is refused by name, at bind and update', async () => {
    const device = await requireGpu();
    const g = new GpuScratch(device);
    for (const kernel of [optimizerStepKernel, optimizerStepMergedKernel, optimizerStepFusedKernel]) {
      const k = kernel.create(device);
      const n = 5 * GRAD_NORM_BLOCK_HARDWARE;
      const buffers = {
        params: g.empty(n), grads: g.empty(n), m: g.empty(n), v: g.empty(n), norm: g.empty(1),
        health: g.empty(1), lrScale: g.empty(2),
      };
      const config = { ...BASE, n, step: 1, block: GRAD_NORM_BLOCK_HARDWARE };
      expect(() => k.bind({ ...buffers, partials: g.empty(4) }, config)).toThrow(/the partials buffer holds 16 bytes, this configuration needs 20 \(gradNormKernel.scratchWords, or the config's blocks\)/);
      const call = k.bind({ ...buffers, partials: g.empty(5) }, config);
      expect(() => call.update({ ...config, block: 1024 })).toThrow(/the partials buffer holds 20 bytes, this configuration needs 40/);
      k.destroy();
    }
    g.destroy();
  });
});
