/**
 * Non-finite detection (kernel `finiteCheck.wgsl`): each update ORs a bit into a health word when
 * the loss rows, the gradients or the parameters hold a NaN or an Inf, so a blow-up is noticed in
 * the same readback as the metrics and the trainer can roll back (PERF_RELIABILITY.md 7.3).
 */
import finiteCheckWGSL from './finiteCheck.wgsl?raw';
import { defineKernel, uniformLayout } from './pipeline';

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

export const FINITE_CHECK_UNIFORM = uniformLayout([['n', 'u32'], ['bit', 'u32'], ['stride', 'u32'], ['offset', 'u32']] as const);

export interface FiniteCheckConfig {
  /** Values checked. */
  n: number;
  bit: number;
  /** Words per row and the checked column (defaults 1 and 0: a flat buffer). */
  stride?: number;
  offset?: number;
}

/** Buffers: data [n * stride] (f32), health [1] (u32 flags, ORed into). */
export const finiteCheckKernel = defineKernel({
  label: 'finiteCheck',
  wgsl: finiteCheckWGSL,
  workgroupSize: FINITE_CHECK_WORKGROUP_SIZE,
  bindings: ['data', 'health'],
  uniform: FINITE_CHECK_UNIFORM,
  values: (c: FiniteCheckConfig) => ({ n: c.n, bit: c.bit, stride: c.stride ?? 1, offset: c.offset ?? 0 }),
  workgroups: (c) => Math.ceil(c.n / FINITE_CHECK_WORKGROUP_SIZE),
});
