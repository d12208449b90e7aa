/**
 * Per-row log-prob of the sampled token, entropy and sum of squared probabilities, by log-sum-exp
 * (kernel `tokenStats.wgsl`; docs/METHODS.md section 2):
 *   lse = m + log sum_v exp(z_v - m),  logp = z_a - lse,
 *   H = lse - sum_v pi_v z_v,          sum pi^2 = exp(LSE(2z) - 2 lse).
 * Masked logits have pi = 0 and are skipped so that 0 * (-1e30) never enters the sum.
 * With sampler options (sampler.ts) the three are those of the sampler's distribution: the rounded
 * logits over the kept tokens, so logp is the rollout's own log-prob of its token.
 */
import { MASKED_LOGIT } from '../model/mlp';
import { rowLse } from './logitGrad';
import { samplerActive, samplerKept, samplerLogp, samplerRow, samplerUniform, samplerWGSL, type SamplerOptions, type SamplerRow } from './sampler';
import { defineKernel, uniformLayout } from '../pipeline';
import tokenStatsWGSL from './tokenStats.wgsl?raw';
import tokenStatsSubgroupWGSL from './tokenStatsSubgroup.wgsl?raw';
import tokenStatsUnrolledWGSL from './tokenStatsUnrolled.wgsl?raw';
import rowSoftmaxWGSL from './rowSoftmax.wgsl?raw';
import { subgroupRowSource, subgroupRowWorkgroups, SUBGROUP_WORKGROUP_SIZE } from './rowSubgroup';
import { unrolledRowSource, unrolledVocab } from './rowUnrolled';
import type { RowLayout } from '../selectors';

export interface TokenStats {
  /** [R] log pi(a_r) */
  logp: Float32Array;
  /** [R] entropy in nats */
  entropy: Float32Array;
  /** [R] sum_v pi_v^2 */
  sumP2: Float32Array;
}

export function tokenStatsCpu(
  z: Float32Array,
  V: number,
  seq: Int32Array | Uint32Array,
  rowPos: Uint32Array,
  firstOf?: Int32Array,
  sampler?: SamplerOptions,
): TokenStats {
  const R = rowPos.length;
  const out: TokenStats = {
    logp: new Float32Array(R),
    entropy: new Float32Array(R),
    sumP2: new Float32Array(R),
  };
  if (samplerActive(sampler)) {
    samplerUniform(sampler);
    samplerStatsCpu(z, V, seq, rowPos, firstOf, sampler, out);
    return out;
  }
  // Rows whose logits repeat an earlier row's (firstOf: forwardCpu's, for these rows of z) share
  // its log-sum-exp, entropy and sum of squares; only the sampled token's log-prob is their own.
  const lses = firstOf ? new Float64Array(R) : null;
  for (let r = 0; r < R; r++) {
    const off = r * V;
    const first = firstOf ? firstOf[r]! : r;
    if (first < r && lses) {
      out.logp[r] = z[off + seq[rowPos[r]!]!]! - lses[first]!;
      out.entropy[r] = out.entropy[first]!;
      out.sumP2[r] = out.sumP2[first]!;
      continue;
    }
    const lse = rowLse(z, off, V);
    if (lses) lses[r] = lse;
    let m2 = -Infinity;
    let pz = 0;
    for (let v = 0; v < V; v++) {
      const zv = z[off + v]!;
      if (zv === MASKED_LOGIT) continue;
      m2 = Math.max(m2, 2 * zv);
      pz += Math.exp(zv - lse) * zv;
    }
    let s2 = 0;
    for (let v = 0; v < V; v++) {
      const zv = z[off + v]!;
      if (zv !== MASKED_LOGIT) s2 += Math.exp(2 * zv - m2);
    }
    out.logp[r] = z[off + seq[rowPos[r]!]!]! - lse;
    out.entropy[r] = lse - pz;
    out.sumP2[r] = Math.exp(m2 + Math.log(s2) - 2 * lse);
  }
  return out;
}

/** tokenStatsCpu with sampler options (tokenStatsRowSampler in tokenStats.wgsl). */
function samplerStatsCpu(
  z: Float32Array,
  V: number,
  seq: Int32Array | Uint32Array,
  rowPos: Uint32Array,
  firstOf: Int32Array | undefined,
  sampler: SamplerOptions,
  out: TokenStats,
): void {
  const rows: SamplerRow[] = [];
  for (let r = 0; r < rowPos.length; r++) {
    const first = firstOf ? firstOf[r]! : r;
    const a = seq[rowPos[r]!]!;
    // A row that repeats an earlier row's logits has its distribution; only its token is its own.
    const d = first < r ? rows[first]! : samplerRow(z, r * V, V, sampler);
    rows[r] = d;
    out.logp[r] = samplerLogp(d, Math.min(a, V - 1));
    if (first < r) {
      out.entropy[r] = out.entropy[first]!;
      out.sumP2[r] = out.sumP2[first]!;
      continue;
    }
    let pd = 0;
    let s2 = 0;
    for (let v = 0; v < V; v++) {
      if (!samplerKept(d, v)) continue;
      const dz = d.zr[v]! - d.m;
      pd += Math.exp(dz - d.ls) * dz;
      s2 += Math.exp(2 * dz);
    }
    out.entropy[r] = d.ls - pd;
    out.sumP2[r] = s2 / (d.s * d.s);
  }
}

export const TOKEN_STATS_WORKGROUP_SIZE = 64;

/** `struct TokenStats` of tokenStats.wgsl. */
export const TOKEN_STATS_UNIFORM = uniformLayout('TokenStats', [
  ['numRows', 'u32'], ['rowBase', 'u32'], ['vocab', 'u32'], ['logitPrecision', 'u32'], ['topK', 'u32'], ['topP', 'f32'],
] as const);

/** A tokenStats call: `sampler` gives the statistics of the sampler's distribution (sampler.ts). */
export interface TokenStatsConfig {
  vocab: number;
  numRows: number;
  rowBase?: number;
  sampler?: SamplerOptions;
}

/**
 * tokenStatsCpu on the GPU: buffers z, seq, rowPos, and the outputs logp, entropy, sumP2. Row r of
 * the call is rowBase + r in z, rowPos and the outputs. The WGSL evaluates the same formulas in the
 * shifted logits z - max (H = log s - sum pi (z - m), sum pi^2 = sum exp(2(z - m)) / s^2), which
 * keep their digits in f32 at |z| ~ 1e4 where lse - sum pi z does not.
 */
const tokenStatsIo = {
  bindings: ['z', 'seq', 'rowPos', 'logp', 'entropy', 'sumP2'],
  uniform: TOKEN_STATS_UNIFORM,
  values: (c: TokenStatsConfig) => ({
    numRows: c.numRows, rowBase: c.rowBase ?? 0, vocab: c.vocab, ...samplerUniform(c.sampler),
  }),
} as const;

export const tokenStatsKernel = defineKernel({
  label: 'tokenStats',
  wgsl: tokenStatsWGSL + rowSoftmaxWGSL + samplerWGSL,
  entryPoint: 'tokenStatsRows',
  workgroupSize: TOKEN_STATS_WORKGROUP_SIZE,
  ...tokenStatsIo,
  workgroups: (c) => Math.ceil(c.numRows / TOKEN_STATS_WORKGROUP_SIZE),
});

/** tokenStatsKernel with a subgroup per four rows (kernels/softmax/rowSubgroup.ts); needs the `subgroups` feature. */
export const tokenStatsSubgroupKernel = defineKernel({
  label: 'tokenStatsSubgroup',
  wgsl: subgroupRowSource(tokenStatsWGSL + rowSoftmaxWGSL + samplerWGSL, tokenStatsSubgroupWGSL),
  file: 'tokenStats',
  workgroupSize: SUBGROUP_WORKGROUP_SIZE,
  requires: 'subgroups',
  ...tokenStatsIo,
  workgroups: (c) => subgroupRowWorkgroups(c.numRows),
});

/** tokenStatsKernel compiled for its vocabulary (kernels/softmax/rowUnrolled.ts): vocabularies up to 64, a pipeline each. */
export const tokenStatsUnrolledKernel = defineKernel({
  label: 'tokenStatsUnrolled',
  wgsl: unrolledRowSource(tokenStatsWGSL + rowSoftmaxWGSL + samplerWGSL, tokenStatsUnrolledWGSL),
  file: 'tokenStats',
  entryPoint: 'tokenStatsUnrolled',
  workgroupSize: TOKEN_STATS_WORKGROUP_SIZE,
  ...tokenStatsIo,
  specialize: (c) => unrolledVocab('tokenStatsUnrolled', c.vocab),
  workgroups: (c) => Math.ceil(c.numRows / TOKEN_STATS_WORKGROUP_SIZE),
});

export const tokenStatsKernels: Record<RowLayout, typeof tokenStatsKernel> = {
  thread: tokenStatsKernel,
  subgroup: tokenStatsSubgroupKernel,
  unrolled: tokenStatsUnrolledKernel,
};
