/**
 * Non-finite detection (kernel `finiteCheck.wgsl`): each update ORs a bit into a health word when
 * the log-probs, the loss rows or the parameters hold a NaN or an Inf (adam.wgsl sets the gradients'
 * bit), so a blow-up is noticed in the same readback as the metrics and the trainer can roll back
 * The three are checked in one dispatch at the end of the update.
 */
import finiteCheckWGSL from './finiteCheck.wgsl?raw';
import { defineKernel, uniformLayout } from '../pipeline';

/** Health bits, also the names the trainer reports. */
export const HEALTH = { loss: 1, gradients: 2, parameters: 4 } as const;
export type HealthQuantity = keyof typeof HEALTH;

export const FINITE_CHECK_WORKGROUP_SIZE = 256;

/** True if any of data[i * stride + offset] before `end` is NaN or +-Inf. */
export function nonFiniteCpu(data: ArrayLike<number>, stride = 1, offset = 0, end = data.length): boolean {
  for (let i = offset; i < end; i += stride) if (!Number.isFinite(data[i]!)) return true;
  return false;
}

/** The quantities named by a health word, in a fixed order. */
export function healthNames(word: number): HealthQuantity[] {
  return (Object.keys(HEALTH) as HealthQuantity[]).filter((k) => (word & HEALTH[k]) !== 0);
}

export const FINITE_CHECK_UNIFORM = uniformLayout('FiniteCheck', [
  ['rows', 'u32'], ['rowWords', 'u32'], ['params', 'u32'], ['lossBit', 'u32'], ['paramBit', 'u32'],
] as const);

export interface FiniteCheckConfig {
  /** Rows of logp and of the loss rows. */
  rows: number;
  /** Words per loss row (PPO_ROW_WORDS); its words 0 and 1 (loss, ratio) are checked. */
  rowWords: number;
  /** Parameters. */
  params: number;
}

/** Values finiteCheck.wgsl reads: one thread each (a loss row's two words are one thread's). */
export const finiteCheckItems = (c: FiniteCheckConfig): number => 2 * c.rows + c.params;

/**
 * The health bits finiteCheck.wgsl ORs in: HEALTH.loss if logp, or a loss row's loss or ratio word,
 * is NaN or +-Inf; HEALTH.parameters if a parameter is.
 */
export function updateHealthCpu(logp: Float32Array, ppo: Float32Array, rowWords: number, params: Float32Array): number {
  const rows = logp.length;
  const end = rows * rowWords;
  const loss = nonFiniteCpu(logp) || nonFiniteCpu(ppo, rowWords, 0, end) || nonFiniteCpu(ppo, rowWords, 1, end);
  return (loss ? HEALTH.loss : 0) | (nonFiniteCpu(params) ? HEALTH.parameters : 0);
}

/**
 * The update's checks in one dispatch. Buffers: logp [rows] (f32), ppo [rows * rowWords] (loss
 * rows), params [params] (f32), health [1] (u32 flags, ORed into).
 */
export const finiteCheckKernel = defineKernel({
  label: 'finiteCheck',
  wgsl: finiteCheckWGSL,
  workgroupSize: FINITE_CHECK_WORKGROUP_SIZE,
  bindings: ['logp', 'ppo', 'params', 'health'],
  uniform: FINITE_CHECK_UNIFORM,
  values: (c: FiniteCheckConfig) => ({ rows: c.rows, rowWords: c.rowWords, params: c.params, lossBit: HEALTH.loss, paramBit: HEALTH.parameters }),
  workgroups: (c) => Math.ceil(finiteCheckItems(c) / FINITE_CHECK_WORKGROUP_SIZE),
});
