/**
 * VCPO's ESS-scaled learning rate (kernel `adam.wgsl essScale`; docs/METHODS.md 2.5 and 5.10, mit-han-lab/vcpo
 * `compute_ess_info`): the effective sample size of the sequence IS weights w_n = exp(logIS_n) of the
 * live trajectories of one minibatch (the reference computes it per minibatch, megatron_actor.py:846,
 * 881-898), in log space, rho = ESS / N = exp(2 LSE(lambda) - LSE(2 lambda)) / N, and the
 * step's lr factor sqrt(min(1, rho / rhoBase)) (rule sqrt) or min(1, rho / rhoBase) (linear).
 * The factor stays on the GPU: Adam reads it from the same buffer.
 */
import adamWGSL from './adam.wgsl?raw';
import { defineKernel } from '../pipeline';
import { ADAM_FILE_UNIFORMS, ESS_SCALE_UNIFORM } from './adamUniforms';
import type { TrajStats } from '../stats/trajStats';

export interface EssScaleOptions {
  /** false: the factor is 1 (the ESS is still reported). */
  enabled: boolean;
  rule: 'sqrt' | 'linear';
  rhoBase: number;
}

/** [ESS / N, lr factor]. */
export function essScaleCpu(stats: Pick<TrajStats, 'len' | 'logIS'>, o: EssScaleOptions): [number, number] {
  const live: number[] = [];
  stats.len.forEach((len, n) => {
    if (len > 0) live.push(stats.logIS[n]!);
  });
  if (live.length === 0) return [1, 1];
  // A loop, not Math.max(...live): spreading 65,536 trajectories overflowed a browser worker's stack.
  let m = -Infinity;
  for (const lam of live) m = Math.max(m, lam);
  let s1 = 0;
  let s2 = 0;
  for (const lam of live) {
    s1 += Math.exp(lam - m);
    s2 += Math.exp(2 * (lam - m));
  }
  const rho = Math.exp(2 * Math.log(s1) - Math.log(s2)) / live.length;
  const lin = Math.min(1, rho / o.rhoBase);
  return [rho, o.enabled ? (o.rule === 'sqrt' ? Math.sqrt(lin) : lin) : 1];
}


export interface EssScaleConfig extends EssScaleOptions {
  numTraj: number;
  /** First trajectory of the range (default 0): VCPO computes the ESS per minibatch. */
  trajBase?: number;
}

/** Words between the outputs of consecutive ranges in one buffer: 256 bytes, the storage-binding offset alignment. */
export const ESS_OUT_STRIDE = 64;

/** essScaleCpu on the GPU in one workgroup: buffers stats [N * 4] (trajStats.wgsl), out [2]. */
export const essScaleKernel = defineKernel({
  label: 'essScale',
  wgsl: adamWGSL,
  fileUniforms: ADAM_FILE_UNIFORMS,
  file: 'adam',
  entryPoint: 'essScale',
  workgroupSize: 256,
  bindings: { stats: 1, out: 2 },
  uniform: ESS_SCALE_UNIFORM,
  check: (c: EssScaleConfig) => {
    if (!(c.rhoBase > 0)) throw new Error(`essScale: rhoBase ${c.rhoBase} must be > 0`);
  },
  values: (c: EssScaleConfig) => ({ numTraj: c.numTraj, rule: c.rule === 'linear' ? 1 : 0, rhoBase: c.rhoBase, enabled: c.enabled ? 1 : 0, trajBase: c.trajBase ?? 0 }),
  workgroups: () => 1,
});
