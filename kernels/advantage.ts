/**
 * GRPO group advantage (kernel `advantage.wgsl`; METHODS.md 4.2, verl
 * `compute_grpo_outcome_advantage`): for trajectory n in group g = floor(n / G),
 *   A_n = (R_n - mean_g) / (std_g + eps)   (or R_n - mean_g without std scaling),
 * broadcast to the trajectory's Tp policy-token rows and multiplied by their mask.
 * A group of size 1 uses mean 0 and std 1, as verl does.
 */
import advantageWGSL from './advantage.wgsl?raw';
import { defineKernel, uniformLayout } from './pipeline';

export interface GrpoOptions {
  group: number;
  scaleStd: boolean;
  unbiasedStd: boolean;
  eps: number;
}

/** rewards [N], mask [N * Tp] -> token advantages [N * Tp]. */
export function grpoAdvantageCpu(
  rewards: Float32Array,
  mask: Float32Array,
  Tp: number,
  o: GrpoOptions,
): Float32Array {
  const N = rewards.length;
  const G = o.group;
  const adv = new Float32Array(N * Tp);
  for (let n = 0; n < N; n++) {
    const g0 = Math.floor(n / G) * G;
    let mean = 0;
    let std = 1;
    if (G > 1) {
      for (let i = 0; i < G; i++) mean += rewards[g0 + i]!;
      mean /= G;
      let ss = 0;
      for (let i = 0; i < G; i++) ss += (rewards[g0 + i]! - mean) ** 2;
      std = Math.sqrt(ss / (o.unbiasedStd ? G - 1 : G));
    }
    const a = o.scaleStd ? (rewards[n]! - mean) / (std + o.eps) : rewards[n]! - mean;
    for (let j = 0; j < Tp; j++) adv[n * Tp + j] = a * mask[n * Tp + j]!;
  }
  return adv;
}

export const ADVANTAGE_WORKGROUP_SIZE = 64;

/** Mirrors `struct Advantage` in advantage.wgsl. */
export const ADVANTAGE_UNIFORM = uniformLayout([
  ['numRows', 'u32'], ['tp', 'u32'], ['group', 'u32'], ['scaleStd', 'u32'], ['unbiasedStd', 'u32'], ['eps', 'f32'],
] as const);

export interface AdvantageConfig extends GrpoOptions {
  /** Trajectories N. */
  numTraj: number;
  /** Policy-token rows per trajectory. */
  tp: number;
}

/** grpoAdvantageCpu on the GPU: buffers rewards [N], mask [N * Tp], adv [N * Tp] (output). */
export const advantageKernel = defineKernel({
  label: 'advantage',
  wgsl: advantageWGSL,
  workgroupSize: ADVANTAGE_WORKGROUP_SIZE,
  bindings: ['rewards', 'mask', 'adv'],
  uniform: ADVANTAGE_UNIFORM,
  check: (c: AdvantageConfig) => {
    if (c.group < 1 || c.numTraj % c.group !== 0) throw new Error(`advantage: ${c.numTraj} trajectories are not whole groups of ${c.group}`);
  },
  values: (c: AdvantageConfig) => ({
    numRows: c.numTraj * c.tp, tp: c.tp, group: c.group,
    scaleStd: c.scaleStd ? 1 : 0, unbiasedStd: c.unbiasedStd ? 1 : 0, eps: c.eps,
  }),
  workgroups: (c) => Math.ceil((c.numTraj * c.tp) / ADVANTAGE_WORKGROUP_SIZE),
});
export const createAdvantageKernel = (device: GPUDevice) => advantageKernel.create(device);
