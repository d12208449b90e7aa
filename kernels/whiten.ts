/**
 * Masked batch whitening in place (kernel `whiten.wgsl`; verl `masked_whiten`, used by REINFORCE++,
 * METHODS.md 4.7): over the masked rows,
 *   mean = sum m A / sum m,  var = sum m (A - mean)^2 / (sum m - 1)   (unbiased, as verl)
 *   A <- (A - mean) / sqrt(var + 1e-8)
 * With one masked row (verl raises) A - mean is kept; unmasked rows become 0. The GPU runs one
 * workgroup: each thread sums a strided slice in order, then a fixed tree combines them, so the
 * result is the same on every run.
 */
import { defineKernel, uniformLayout } from './pipeline';
import whitenWGSL from './whiten.wgsl?raw';

/** The masked statistics whitening uses (float64): count, mean, the sd it divides by, and max |A|. */
export function whitenStats(adv: Float32Array, mask: Float32Array): { count: number; mean: number; sd: number; maxAbs: number } {
  let count = 0;
  let sum = 0;
  let maxAbs = 0;
  for (let i = 0; i < adv.length; i++) {
    if (mask[i] === 0) continue;
    count++;
    sum += adv[i]!;
    maxAbs = Math.max(maxAbs, Math.abs(adv[i]!));
  }
  const mean = sum / Math.max(count, 1);
  let ss = 0;
  for (let i = 0; i < adv.length; i++) if (mask[i] !== 0) ss += (adv[i]! - mean) ** 2;
  const sd = count > 1 ? Math.sqrt(ss / (count - 1) + 1e-8) : 1;
  return { count, mean, sd, maxAbs };
}

/** Whitened copy of adv (float64 sums, rounded to f32 once). */
export function whitenCpu(adv: Float32Array, mask: Float32Array): Float32Array {
  const { mean, sd } = whitenStats(adv, mask);
  const out = new Float32Array(adv.length);
  for (let i = 0; i < adv.length; i++) out[i] = mask[i] !== 0 ? (adv[i]! - mean) / sd : 0;
  return out;
}

export const WHITEN_WORKGROUP_SIZE = 256;

/** Mirrors `struct Whiten` in whiten.wgsl. */
export const WHITEN_UNIFORM = uniformLayout([['numRows', 'u32']] as const);

/** whitenCpu on the GPU, in place: buffers mask [numRows], adv [numRows] (read and written). */
export const whitenKernel = defineKernel({
  label: 'whiten',
  wgsl: whitenWGSL,
  workgroupSize: WHITEN_WORKGROUP_SIZE,
  bindings: ['mask', 'adv'],
  uniform: WHITEN_UNIFORM,
  values: (c: { numRows: number }) => ({ numRows: c.numRows }),
  workgroups: (c) => (c.numRows > 0 ? 1 : 0),
});
