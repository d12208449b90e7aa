/**
 * PPO's critic in the toy (METHODS.md 4.1, "an extra table V[s]"): a value table indexed by a
 * state key per policy row (the trainer hashes the tokens the policy sees into the table), GAE
 * advantages and returns from it (kernel `gae.wgsl`, verl `compute_gae_advantage_return`, with the
 * outcome reward on each trajectory's last policy token), and the table's update toward the mean
 * return of the rows that visited each entry (kernel `criticUpdate.wgsl`).
 */
import criticUpdateWGSL from './criticUpdate.wgsl?raw';
import gaeWGSL from './gae.wgsl?raw';
import { defineKernel, uniformLayout } from './pipeline';

export interface GaeOptions {
  gamma: number;
  lambda: number;
}

/** [adv, returns] per row [N * Tp] (float64 math, f32 results). */
export function gaeCpu(
  critic: Float32Array,
  stateKey: Uint32Array,
  mask: Float32Array,
  reward: Float32Array,
  Tp: number,
  o: GaeOptions,
): { adv: Float32Array; ret: Float32Array } {
  const N = reward.length;
  const adv = new Float32Array(N * Tp);
  const ret = new Float32Array(N * Tp);
  for (let n = 0; n < N; n++) {
    let last = -1;
    for (let j = 0; j < Tp; j++) if (mask[n * Tp + j]) last = j;
    let vNext = 0;
    let aNext = 0;
    for (let j = last; j >= 0; j--) {
      const i = n * Tp + j;
      if (!mask[i]) continue;
      const v = critic[stateKey[i]!]!;
      const r = j === last ? reward[n]! : 0;
      // f32 at each step, as the kernel computes.
      const delta = Math.fround(Math.fround(r + Math.fround(o.gamma * vNext)) - v);
      const a = Math.fround(delta + Math.fround(Math.fround(o.gamma * o.lambda) * aNext));
      adv[i] = a;
      ret[i] = Math.fround(a + v);
      vNext = v;
      aNext = a;
    }
  }
  return { adv, ret };
}

/** Updates `critic` in place: each visited entry moves lr of the way to its rows' mean return. */
export function criticUpdateCpu(critic: Float32Array, stateKey: Uint32Array, mask: Float32Array, ret: Float32Array, lr: number): void {
  const sum = new Float64Array(critic.length);
  const count = new Float64Array(critic.length);
  for (let i = 0; i < mask.length; i++) {
    if (!mask[i]) continue;
    sum[stateKey[i]!]! += ret[i]!;
    count[stateKey[i]!]!++;
  }
  for (let k = 0; k < critic.length; k++) if (count[k]) critic[k] = critic[k]! + lr * (sum[k]! / count[k]! - critic[k]!);
}

export const GAE_UNIFORM = uniformLayout([['numTraj', 'u32'], ['tp', 'u32'], ['gamma', 'f32'], ['lambda', 'f32']] as const);

/** gaeCpu on the GPU: buffers critic, stateKey, mask, trajIn (advantage.ts packTrajIn), adv and ret (outputs). */
export const gaeKernel = defineKernel({
  label: 'gae',
  wgsl: gaeWGSL,
  workgroupSize: 64,
  bindings: ['critic', 'stateKey', 'mask', 'trajIn', 'adv', 'ret'],
  uniform: GAE_UNIFORM,
  values: (c: { numTraj: number; tp: number } & GaeOptions) => ({ numTraj: c.numTraj, tp: c.tp, gamma: c.gamma, lambda: c.lambda }),
  workgroups: (c) => Math.ceil(c.numTraj / 64),
});

export const CRITIC_UPDATE_UNIFORM = uniformLayout([['tableSize', 'u32'], ['numRows', 'u32'], ['lr', 'f32']] as const);

/** criticUpdateCpu on the GPU: buffers stateKey, mask, ret [numRows], critic [tableSize] (updated). */
export const criticUpdateKernel = defineKernel({
  label: 'criticUpdate',
  wgsl: criticUpdateWGSL,
  workgroupSize: 64,
  bindings: ['stateKey', 'mask', 'ret', 'critic'],
  uniform: CRITIC_UPDATE_UNIFORM,
  values: (c: { tableSize: number; numRows: number; lr: number }) => ({ tableSize: c.tableSize, numRows: c.numRows, lr: c.lr }),
  workgroups: (c) => Math.ceil(c.tableSize / 64),
});
