/**
 * IGPO's information-gain turn rewards (kernel `infoGain.wgsl`; docs/METHODS.md 5.1): with p_k the
 * policy's probability of the ground-truth answer teacher-forced after the first k turns
 * (exp of the mean answer-token log-prob; or the mean log-prob itself for log_prob_diff),
 *   turn t < T_n - 1: r_t = p_{t+1} - p_t;   the last turn taken: the outcome reward.
 * The log-probs come from a forward pass over the answer contexts on the same device; the rewards
 * are written into the advantage kernel's per-turn input, so they never travel to the host.
 */
import infoGainWGSL from './infoGain.wgsl?raw';
import { defineKernel, uniformLayout } from '../pipeline';

export type InfoGainType = 'prob_diff' | 'log_prob_diff';

/**
 * Turn rewards [N * maxTurns]: information gain on turns before the last one taken, the outcome on
 * the last one, 0 on turns not taken. logp is [N * maxTurns * span], (n, k, span slot) order.
 */
export function infoGainCpu(
  logp: Float32Array,
  span: number,
  turns: Uint32Array,
  outcome: Float32Array,
  T: number,
  igType: InfoGainType,
): Float32Array {
  const N = turns.length;
  const out = new Float32Array(N * T);
  const p = (n: number, k: number): number => {
    let s = 0;
    for (let i = 0; i < span; i++) s += logp[(n * T + k) * span + i]!;
    const mean = span ? s / span : 0;
    return igType === 'prob_diff' ? Math.exp(mean) : mean;
  };
  for (let n = 0; n < N; n++) {
    const Tn = turns[n]!;
    if (Tn === 0) continue;
    for (let t = 0; t + 1 < Tn; t++) out[n * T + t] = p(n, t + 1) - p(n, t);
    out[n * T + Tn - 1] = outcome[n]!;
  }
  return out;
}

/** `struct InfoGain` of infoGain.wgsl. */
export const INFO_GAIN_UNIFORM = uniformLayout('InfoGain', [['numTraj', 'u32'], ['maxTurns', 'u32'], ['span', 'u32'], ['logDiff', 'u32']] as const);

export interface InfoGainConfig {
  numTraj: number;
  maxTurns: number;
  span: number;
  igType: InfoGainType;
}

/**
 * infoGainCpu on the GPU, in place: buffers scoreLogp [N * T * span], trajIn (advantage.ts
 * packTrajIn; its turns), turnIn (packTurnIn; the host wrote the outcome on each last turn, the
 * kernel writes the earlier turns' rewards).
 */
export const infoGainKernel = defineKernel({
  label: 'infoGain',
  wgsl: infoGainWGSL,
  workgroupSize: 64,
  bindings: ['scoreLogp', 'trajIn', 'turnIn'],
  uniform: INFO_GAIN_UNIFORM,
  values: (c: InfoGainConfig) => ({ numTraj: c.numTraj, maxTurns: c.maxTurns, span: c.span, logDiff: c.igType === 'log_prob_diff' ? 1 : 0 }),
  workgroups: (c) => Math.ceil(c.numTraj / 64),
});
