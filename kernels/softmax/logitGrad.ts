/**
 * The gradient of the loss w.r.t. the raw logits, per row of the softmax (kernels logitGrad.wgsl,
 * a thread per row, and logitGradSubgroup.wgsl, a subgroup per four rows), beside its CPU
 * reference and the row log-sum-exp that sample and tokenStats share.
 */
import logitGradWGSL from './logitGrad.wgsl?raw';
import logitGradSubgroupWGSL from './logitGradSubgroup.wgsl?raw';
import { MASKED_LOGIT } from '../model/mlp';
import { defineKernel, uniformLayout } from '../pipeline';
import rowSoftmaxWGSL from './rowSoftmax.wgsl?raw';
import { subgroupRowSource, subgroupRowWorkgroups, SUBGROUP_WORKGROUP_SIZE } from './rowSubgroup';
import type { KernelVariant } from '../selectors';

/** Log-sum-exp of one row: m + log sum exp(z - m). Masked logits contribute exactly 0. */
export function rowLse(z: Float32Array, off: number, V: number): number {
  let m = -Infinity;
  for (let v = 0; v < V; v++) m = Math.max(m, z[off + v]!);
  let s = 0;
  // Once some logit is above MASKED_LOGIT, a masked one's exp(z - m) is +0 and adding it leaves s
  // as it is: skipped then, the same sum (rows allow 2-13 of their 12-46 tokens).
  const skip = m > MASKED_LOGIT;
  for (let v = 0; v < V; v++) {
    const zv = z[off + v]!;
    if (skip && zv === MASKED_LOGIT) continue;
    s += Math.exp(zv - m);
  }
  return m + Math.log(s);
}

/**
 * Gradient of the loss w.r.t. the raw logits (kernel `logitGrad.wgsl`):
 *   dz_raw[r, v] = g_r * (onehot(a_r)_v - pi_v) / temperature,   g_r = dLoss/dlogp_r.
 * Forbidden tokens have pi_v = 0 and are never the sampled token, so their gradient is 0.
 */
export function logitGradCpu(
  z: Float32Array,
  V: number,
  seq: Int32Array | Uint32Array,
  rowPos: Uint32Array,
  dlogp: Float32Array,
  temperature: number,
): Float32Array {
  const R = rowPos.length;
  const dz = new Float32Array(R * V);
  for (let r = 0; r < R; r++) {
    const g = dlogp[r]!;
    if (g === 0) continue;
    const lse = rowLse(z, r * V, V);
    const a = seq[rowPos[r]!]!;
    for (let v = 0; v < V; v++) {
      const p = z[r * V + v] === MASKED_LOGIT ? 0 : Math.exp(z[r * V + v]! - lse);
      dz[r * V + v] = (g * ((v === a ? 1 : 0) - p)) / temperature;
    }
  }
  return dz;
}

/** Rows per workgroup of the thread version: a thread per row. */
export const LOGIT_GRAD_WORKGROUP_SIZE = 64;

/** Rows rowBase .. rowBase + numRows - 1 of the call's buffers. */
interface LogitGradConfig {
  numRows: number;
  rowBase?: number;
  vocab: number;
  temperature: number;
}

/** `struct LogitGrad` of logitGrad.wgsl. */
export const LOGIT_GRAD_UNIFORM = uniformLayout('LogitGrad', [
  ['numRows', 'u32'], ['rowBase', 'u32'], ['vocab', 'u32'], ['temperature', 'f32'],
] as const);

const logitGradIo = {
  bindings: ['z', 'seq', 'rowPos', 'dlogp', 'dz'],
  uniform: LOGIT_GRAD_UNIFORM,
  values: (c: LogitGradConfig) => ({
    numRows: c.numRows, rowBase: c.rowBase ?? 0, vocab: c.vocab, temperature: c.temperature,
  }),
} as const;

/** logitGradCpu on the GPU: buffers z, seq, rowPos, dlogp, dz (output). */
export const logitGradKernel = defineKernel({
  label: 'logitGrad',
  wgsl: logitGradWGSL + rowSoftmaxWGSL,
  entryPoint: 'logitGradRows',
  workgroupSize: LOGIT_GRAD_WORKGROUP_SIZE,
  ...logitGradIo,
  workgroups: (c) => Math.ceil(c.numRows / LOGIT_GRAD_WORKGROUP_SIZE),
});

/** logitGradKernel with a subgroup per four rows (kernels/softmax/rowSubgroup.ts); needs the `subgroups` feature. */
export const logitGradSubgroupKernel = defineKernel({
  label: 'logitGradSubgroup',
  wgsl: subgroupRowSource(logitGradWGSL + rowSoftmaxWGSL, logitGradSubgroupWGSL),
  file: 'logitGrad',
  workgroupSize: SUBGROUP_WORKGROUP_SIZE,
  requires: 'subgroups',
  ...logitGradIo,
  workgroups: (c) => subgroupRowWorkgroups(c.numRows),
});

/**
 * logitGrad's version per variant. It writes a whole row of gradients, which a subgroup's
 * neighbouring lanes write coalesced: on an H200 at 19 logits and 589,824 rows 0.077 ms, against
 * 0.184 for a thread per row and 0.147 for one with the row in registers (sampleUnrolled.wgsl),
 * whose stores stay V * 4 bytes apart between neighbouring threads.
 */
export const logitGradKernels: Record<KernelVariant, typeof logitGradKernel> = {
  thread: logitGradKernel,
  subgroup: logitGradSubgroupKernel,
};

