/**
 * Global gradient-norm clipping and Adam (kernels `gradNorm.wgsl`, its two passes, and `adam.wgsl`;
 * Kingma & Ba 2015):
 *   s = min(1, maxNorm / (||g|| + 1e-6))   (s = 1 when maxNorm = 0)
 *   m = b1 m + (1 - b1) s g;  v = b2 v + (1 - b2) (s g)^2
 *   p -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
 */
import adamWGSL from './adam.wgsl?raw';
import gradNormWGSL from './gradNorm.wgsl?raw';
import { defineKernel, uniformLayout, type BufferArg } from '../pipeline';
import { ADAM_FILE_UNIFORMS, ADAM_UNIFORM } from './adamUniforms';
import { defineTwoPass } from '../reduce';
import { defineStages, withScratchCheck } from '../stages';

/** sqrt(sum g^2), summed in float64 in index order: the reference the GPU's f32 two-pass sum is held to. */
export function gradNormCpu(g: Float32Array): number {
  let s = 0;
  for (let i = 0; i < g.length; i++) s += g[i]! * g[i]!;
  return Math.sqrt(s);
}

export interface AdamOptions {
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  /** 1-based step count for bias correction. */
  step: number;
  /** 0 disables clipping. */
  maxGradNorm: number;
}

export function clipScale(norm: number, maxGradNorm: number): number {
  return maxGradNorm > 0 ? Math.min(1, maxGradNorm / (norm + 1e-6)) : 1;
}

/**
 * Updates params, m and v in place and returns true; a non-finite gradient norm skips the step
 * (nothing changes) and returns false, as adam.wgsl does.
 */
export function adamCpu(
  params: Float32Array,
  grads: Float32Array,
  m: Float32Array,
  v: Float32Array,
  norm: number,
  o: AdamOptions,
): boolean {
  // The GPU's f32 sum of squares overflows where this float64 one does not: skip on the f32 verdict.
  if (!Number.isFinite(Math.fround(norm * norm))) return false;
  const s = clipScale(norm, o.maxGradNorm);
  const { beta1, beta2, lr, eps } = o;
  const bc1 = 1 - beta1 ** o.step;
  const bc2 = 1 - beta2 ** o.step;
  const c1 = 1 - beta1;
  const c2 = 1 - beta2;
  // The options in locals, and the moments rounded to f32 here rather than read back from the
  // arrays: the same values, and about a quarter less time per parameter in Node.
  for (let i = 0; i < params.length; i++) {
    const g = grads[i]! * s;
    const mi = Math.fround(beta1 * m[i]! + c1 * g);
    const vi = Math.fround(beta2 * v[i]! + c2 * g * g);
    m[i] = mi;
    v[i] = vi;
    params[i] = params[i]! - (lr * (mi / bc1)) / (Math.sqrt(vi / bc2) + eps);
  }
  return true;
}

/** gradNorm's workgroups (both passes) have 256 threads; adam runs one thread per parameter. */
export const GRAD_NORM_WORKGROUP_SIZE = 256;
export const ADAM_WORKGROUP_SIZE = 64;
/**
 * Gradient entries per workgroup of gradNorm's pass 1: 32 per thread. The scale preset's 276,504
 * parameters make 34 workgroups, the default model's 9,795 two; pass 2 stays one loop step per
 * thread up to 2M parameters. 2,048 (136 workgroups on `scale`) was measured 3-10x slower than this
 * on SwiftShader, where each extra workgroup costs ~0.3 ms (BENCHMARKS.md); on a GPU either fills
 * far more of the device than the one workgroup before.
 */
export const GRAD_NORM_BLOCK = 8192;
/**
 * The block on hardware adapters (the backend's `subgroup` kernel variant, kernels/selectors.ts): 8
 * entries per thread, two steps of four loads. On the H200 the 8,192 block was a chain of 32
 * dependent loads per thread (26 µs at 9,795 entries in 2 workgroups, a copy of the same bytes 4 µs).
 */
export const GRAD_NORM_BLOCK_HARDWARE = 2048;

/** `struct GradNorm` of gradNorm.wgsl. */
export const GRAD_NORM_UNIFORM = uniformLayout('GradNorm', [['n', 'u32'], ['block', 'u32'], ['blocks', 'u32']] as const);

export interface GradNormConfig {
  /** Gradient entries. */
  n: number;
  /** Entries per workgroup of pass 1 (default GRAD_NORM_BLOCK); with n, it fixes the summation order. */
  block?: number;
}

/** Pass 1's blocks: a function of n and the block only, which fixes the summation order. */
export const gradNormBlocks = (n: number, block = GRAD_NORM_BLOCK) => Math.ceil(n / block);

const gradNormValues = (c: GradNormConfig) => {
  const block = c.block ?? GRAD_NORM_BLOCK;
  return { n: c.n, block, blocks: gradNormBlocks(c.n, block) };
};

const checkBlock = (c: GradNormConfig) => {
  if (c.block !== undefined && !(Number.isInteger(c.block) && c.block >= 1)) {
    throw new Error(`gradNorm: block ${c.block} must be a positive integer`);
  }
};

/** Pass 1 of gradNorm: buffers grads [n], partials [blocks] (sums of squares per block). */
export const gradNormPartialKernel = defineKernel({
  label: 'gradNorm',
  wgsl: gradNormWGSL,
  entryPoint: 'gradNormBlocks',
  workgroupSize: GRAD_NORM_WORKGROUP_SIZE,
  bindings: ['grads', 'partials'],
  uniform: GRAD_NORM_UNIFORM,
  check: checkBlock,
  values: gradNormValues,
  workgroups: (c: GradNormConfig) => gradNormValues(c).blocks,
});

/** Pass 2 of gradNorm, one workgroup: buffers partials [blocks], norm [1] (output). */
export const gradNormSumKernel = defineKernel({
  label: 'gradNormSum',
  wgsl: gradNormWGSL,
  file: 'gradNorm',
  entryPoint: 'gradNormSum',
  workgroupSize: GRAD_NORM_WORKGROUP_SIZE,
  bindings: { partials: 2, norm: 3 },
  uniform: GRAD_NORM_UNIFORM,
  values: gradNormValues,
  workgroups: () => 1,
});

/**
 * gradNormCpu on the GPU, two dispatches (kernels/reduce.ts defineTwoPass): buffers grads [n],
 * partials (scratch of at least `gradNormKernel.scratchWords(config)` words) and norm [1] (output).
 * The result is the same bits on every run; it differs from the float64 reference by the f32
 * rounding of about (block / 256 + ceil(blocks / 256) + 2 log2 256) additions, 25 ulps of the sum of
 * squares for n <= 524,288.
 */
export const gradNormKernel = defineTwoPass({
  label: 'gradNorm',
  partial: gradNormPartialKernel,
  combine: gradNormSumKernel,
  combineConfig: (c: GradNormConfig) => c,
  scratchWords: (c: GradNormConfig) => Math.max(1, gradNormValues(c).blocks),
});


/** An optimizer step's configuration: Adam's, the parameter count, and gradNorm's block. */
export type AdamConfig = AdamOptions & GradNormConfig;

const adamValues = (c: AdamConfig) => ({
  n: c.n, lr: c.lr, beta1: c.beta1, beta2: c.beta2, eps: c.eps,
  bc1: 1 - c.beta1 ** c.step, bc2: 1 - c.beta2 ** c.step, maxGradNorm: c.maxGradNorm,
  oneMinusBeta1: 1 - c.beta1, oneMinusBeta2: 1 - c.beta2,
});

/**
 * adamCpu on the GPU: buffers params, grads, m, v (updated in place) and norm [1] (gradNorm's
 * output). The bias corrections depend on the step, so each optimizer step in one submit needs its
 * own call (bind once per step slot, `update` before the submit).
 */
export const adamKernel = defineKernel({
  label: 'adam',
  wgsl: adamWGSL,
  fileUniforms: ADAM_FILE_UNIFORMS,
  entryPoint: 'adam',
  workgroupSize: ADAM_WORKGROUP_SIZE,
  bindings: { params: 3, grads: 4, m: 5, v: 6, norm: 7, health: 8, lrScale: 9 },
  uniform: ADAM_UNIFORM,
  values: adamValues,
  workgroups: (c: AdamConfig) => Math.ceil(c.n / ADAM_WORKGROUP_SIZE),
});

export type OptimizerStepBuffers = Record<'params' | 'grads' | 'm' | 'v' | 'partials' | 'norm' | 'health' | 'lrScale', BufferArg>;

/**
 * One optimizer step on the GPU: the gradient's norm (gradNormCpu), then adamCpu with it, in three
 * dispatches (gradNorm's two, adam). Buffers: params, grads, m, v (as adam), partials (scratch of
 * gradNormKernel.scratchWords(config) words, refused by name at bind and update if smaller),
 * norm [1] (written) and health, lrScale (as adam).
 */
export const optimizerStepKernel = withScratchCheck(
  defineStages<OptimizerStepBuffers, AdamConfig>('optimizerStep', [gradNormPartialKernel, gradNormSumKernel, adamKernel]),
  {
    words: (c) => Math.max(1, gradNormValues(c).blocks),
    needs: () => 'this configuration needs',
    source: 'gradNormKernel.scratchWords',
  },
);
