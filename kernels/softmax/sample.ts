/**
 * Token sampling by inverse CDF over the softmax of one row of masked logits (kernel `sample.wgsl`).
 * The uniform comes from the counter-based hash hashUniform(seed, iter, rowPos, 0), identical on
 * GPU and CPU, so both backends draw the same tokens up to f32 rounding at CDF boundaries.
 * With sampler options (sampler.ts: reduced-precision logits, top-k, top-p) the same uniform walks
 * the inverse CDF of the sampler's distribution instead: the kept tokens in index order.
 */
import { hashUniform } from '../rng';
import { MASKED_LOGIT } from '../model/mlp';
import { rowLse } from './logitGrad';
import { samplerActive, samplerKept, samplerRow, samplerUniform, samplerWGSL, type SamplerOptions } from './sampler';
import { defineKernel, uniformLayout } from '../pipeline';
import sampleWGSL from './sample.wgsl?raw';
import sampleSubgroupWGSL from './sampleSubgroup.wgsl?raw';
import sampleUnrolledWGSL from './sampleUnrolled.wgsl?raw';
import rowSoftmaxWGSL from './rowSoftmax.wgsl?raw';
import { subgroupRowSource, subgroupRowWorkgroups, SUBGROUP_WORKGROUP_SIZE } from './rowSubgroup';
import { unrolledRowSource, unrolledVocab } from './rowUnrolled';
import type { RowLayout } from '../selectors';

/** Writes the sampled token of row r into seq[rowPos[r]]; `sampler` draws from the sampler's distribution. */
export function sampleCpu(
  z: Float32Array,
  V: number,
  rowPos: Uint32Array,
  seq: Int32Array | Uint32Array,
  seed: number,
  iter: number,
  sampler?: SamplerOptions,
): void {
  if (samplerActive(sampler)) {
    samplerUniform(sampler);
    sampleSamplerCpu(z, V, rowPos, seq, seed, iter, sampler);
    return;
  }
  for (let r = 0; r < rowPos.length; r++) {
    const off = r * V;
    const lse = rowLse(z, off, V);
    const u = hashUniform(seed, iter, rowPos[r]!, 0);
    let cum = 0;
    let pick = -1;
    let last = 0;
    for (let v = 0; v < V; v++) {
      if (z[off + v] === MASKED_LOGIT) continue;
      last = v;
      cum += Math.exp(z[off + v]! - lse);
      if (u < cum) {
        pick = v;
        break;
      }
    }
    // Rounding can leave the total just under u: take the last allowed token.
    seq[rowPos[r]!] = pick >= 0 ? pick : last;
  }
}

/** sampleCpu with sampler options: the inverse CDF of each row's kept tokens (sampleRowSampler in sample.wgsl). */
function sampleSamplerCpu(
  z: Float32Array,
  V: number,
  rowPos: Uint32Array,
  seq: Int32Array | Uint32Array,
  seed: number,
  iter: number,
  sampler: SamplerOptions,
): void {
  for (let r = 0; r < rowPos.length; r++) {
    const d = samplerRow(z, r * V, V, sampler);
    const u = hashUniform(seed, iter, rowPos[r]!, 0);
    let cum = 0;
    let pick = -1;
    let last = 0;
    for (let v = 0; v < V; v++) {
      if (!samplerKept(d, v)) continue;
      last = v;
      cum += Math.exp(d.zr[v]! - d.m - d.ls);
      if (u < cum) {
        pick = v;
        break;
      }
    }
    seq[rowPos[r]!] = pick >= 0 ? pick : last;
  }
}

export const SAMPLE_WORKGROUP_SIZE = 64;

export interface SampleConfig {
  vocab: number;
  numRows: number;
  /** First entry of rowPos (default 0). */
  rowBase?: number;
  /** First row of z (default 0). */
  zBase?: number;
  /** The token of row r also goes to sampled[r * outStride + outOffset] (defaults 1 and 0). */
  outStride?: number;
  outOffset?: number;
  seed: number;
  iter: number;
  /** The sampler's precision and truncation (sampler.ts); absent: the trainer's own distribution. */
  sampler?: SamplerOptions;
}

/** `struct Sample` of sample.wgsl. */
export const SAMPLE_UNIFORM = uniformLayout('Sample', [
  ['numRows', 'u32'], ['rowBase', 'u32'], ['zBase', 'u32'], ['vocab', 'u32'],
  ['outStride', 'u32'], ['outOffset', 'u32'], ['seed', 'u32'], ['iter', 'u32'],
  ['logitPrecision', 'u32'], ['topK', 'u32'], ['topP', 'f32'],
] as const);

const sampleIo = {
  bindings: ['z', 'rowPos', 'seq', 'sampled'],
  uniform: SAMPLE_UNIFORM,
  values: (c: SampleConfig) => ({
    numRows: c.numRows, rowBase: c.rowBase ?? 0, zBase: c.zBase ?? 0, vocab: c.vocab,
    outStride: c.outStride ?? 1, outOffset: c.outOffset ?? 0, seed: c.seed >>> 0, iter: c.iter >>> 0,
    ...samplerUniform(c.sampler),
  }),
} as const;

/** sampleCpu on the GPU: buffers z, rowPos, seq (tokens written in place) and sampled (readback). */
export const sampleKernel = defineKernel({
  label: 'sample',
  wgsl: sampleWGSL + rowSoftmaxWGSL + samplerWGSL,
  entryPoint: 'sampleRows',
  workgroupSize: SAMPLE_WORKGROUP_SIZE,
  ...sampleIo,
  workgroups: (c) => Math.ceil(c.numRows / SAMPLE_WORKGROUP_SIZE),
});

/** sampleKernel with a subgroup per four rows (kernels/softmax/rowSubgroup.ts); needs the `subgroups` feature. */
export const sampleSubgroupKernel = defineKernel({
  label: 'sampleSubgroup',
  wgsl: subgroupRowSource(sampleWGSL + rowSoftmaxWGSL + samplerWGSL, sampleSubgroupWGSL),
  file: 'sample',
  workgroupSize: SUBGROUP_WORKGROUP_SIZE,
  requires: 'subgroups',
  ...sampleIo,
  workgroups: (c) => subgroupRowWorkgroups(c.numRows),
});

/** sampleKernel compiled for its vocabulary (kernels/softmax/rowUnrolled.ts): vocabularies up to 64, a pipeline each. */
export const sampleUnrolledKernel = defineKernel({
  label: 'sampleUnrolled',
  wgsl: unrolledRowSource(sampleWGSL + rowSoftmaxWGSL + samplerWGSL, sampleUnrolledWGSL),
  file: 'sample',
  entryPoint: 'sampleUnrolled',
  workgroupSize: SAMPLE_WORKGROUP_SIZE,
  ...sampleIo,
  specialize: (c) => unrolledVocab('sampleUnrolled', c.vocab),
  workgroups: (c) => Math.ceil(c.numRows / SAMPLE_WORKGROUP_SIZE),
});

export const sampleKernels: Record<RowLayout, typeof sampleKernel> = {
  thread: sampleKernel,
  subgroup: sampleSubgroupKernel,
  unrolled: sampleUnrolledKernel,
};
