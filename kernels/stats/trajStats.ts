/**
 * Per-trajectory statistics of the rollout, one thread per trajectory (kernel `trajStats.wgsl`).
 * They feed the trajectory-level advantage options (kernels/advantage/advantage.ts):
 *   len     = sum_j m_j                                  masked (policy) token count
 *   entMean = sum_j m_j H_j / len   (0 when len = 0)     EDGE-GRPO's P_n (docs/METHODS.md 5.3)
 *   logIS   = sum_j m_j clamp(l^old_j - l^rollout_j, -20, 20)
 *                                                        VCPO's log sequence IS weight (5.10)
 *   g2      = sum_j m_j max(1 - 2 exp(l^old_j) + sum_v pi_v^2, 0)
 *                                                        the logit-gradient proxy ||g_n||^2 (5.13)
 * Each g2 term is (1 - pi_a)^2 + sum_{v != a} pi_v^2 >= 0; the max(.., 0) only removes f32 rounding.
 * Rows with m = 0 are skipped, never multiplied, so garbage in padding rows cannot leak in as NaN.
 */
import { defineKernel, uniformLayout } from '../pipeline';
import trajStatsWGSL from './trajStats.wgsl?raw';

/** One trajectory's statistics; the GPU layout is `struct TrajStats` (4 f32, 16 bytes). */
export interface TrajStats {
  /** [N] masked token count */
  len: Float32Array;
  /** [N] masked mean entropy (nats), 0 for an empty trajectory */
  entMean: Float32Array;
  /** [N] log sequence IS weight log(pi_old / mu) over masked tokens */
  logIS: Float32Array;
  /** [N] sum of the per-token logit-gradient proxy, >= 0 */
  g2: Float32Array;
}

/** Words per trajectory in the GPU buffer (`struct TrajStats`). */
export const TRAJ_STATS_WORDS = 4;

export interface TrajStatsInput {
  /** [N * Tp] 0/1 loss mask */
  mask: Float32Array;
  /** [N * Tp] log pi_old of the sampled tokens (the trainer's policy before the update) */
  logpOld: Float32Array;
  /** [N * Tp] log mu: the log-prob the rollout policy had (equal to logpOld when on-policy) */
  logpRollout: Float32Array;
  /** [N * Tp] entropy under pi_old */
  entropyOld: Float32Array;
  /** [N * Tp] sum_v pi_old,v^2 */
  sumP2Old: Float32Array;
}

/** The g2 term of one token: 1 - 2 pi_a + sum_v pi_v^2, clamped at 0 (also used by tokenBaseline). */
export function gradProxy(logp: number, sumP2: number): number {
  return Math.max(1 - 2 * Math.exp(logp) + sumP2, 0);
}

export function trajStatsCpu(s: TrajStatsInput, Tp: number): TrajStats {
  const N = Tp > 0 ? Math.floor(s.mask.length / Tp) : 0;
  const out: TrajStats = {
    len: new Float32Array(N),
    entMean: new Float32Array(N),
    logIS: new Float32Array(N),
    g2: new Float32Array(N),
  };
  for (let n = 0; n < N; n++) {
    let len = 0;
    let ent = 0;
    let lis = 0;
    let g2 = 0;
    for (let j = 0; j < Tp; j++) {
      const i = n * Tp + j;
      const m = s.mask[i]!;
      if (m === 0) continue;
      len += m;
      ent += m * s.entropyOld[i]!;
      lis += m * Math.min(Math.max(s.logpOld[i]! - s.logpRollout[i]!, -20), 20);
      g2 += m * gradProxy(s.logpOld[i]!, s.sumP2Old[i]!);
    }
    out.len[n] = len;
    out.entMean[n] = len > 0 ? ent / len : 0;
    out.logIS[n] = lis;
    out.g2[n] = g2;
  }
  return out;
}

/** TrajStats as the GPU buffer holds it: [N * 4] = (len, entMean, logIS, g2) per trajectory. */
export function packTrajStats(t: TrajStats): Float32Array {
  const N = t.len.length;
  const out = new Float32Array(N * TRAJ_STATS_WORDS);
  for (let n = 0; n < N; n++) out.set([t.len[n]!, t.entMean[n]!, t.logIS[n]!, t.g2[n]!], n * TRAJ_STATS_WORDS);
  return out;
}

/** The inverse of packTrajStats (for reading the GPU buffer back). */
export function unpackTrajStats(words: Float32Array, N: number): TrajStats {
  const col = (k: number) => Float32Array.from({ length: N }, (_, n) => words[n * TRAJ_STATS_WORDS + k]!);
  return { len: col(0), entMean: col(1), logIS: col(2), g2: col(3) };
}

export const TRAJ_STATS_WORKGROUP_SIZE = 64;

/** `struct TrajStatsParams` of trajStats.wgsl. */
export const TRAJ_STATS_UNIFORM = uniformLayout('TrajStatsParams', [['numTraj', 'u32'], ['tp', 'u32']] as const);

export interface TrajStatsConfig {
  numTraj: number;
  /** Policy-token rows per trajectory. */
  tp: number;
}

/**
 * trajStatsCpu on the GPU. Buffers: mask, logpOld, logpRollout, entropyOld, sumP2Old [N * tp];
 * out [N * 4] (`struct TrajStats`, see packTrajStats).
 */
export const trajStatsKernel = defineKernel({
  label: 'trajStats',
  wgsl: trajStatsWGSL,
  workgroupSize: TRAJ_STATS_WORKGROUP_SIZE,
  bindings: ['mask', 'logpOld', 'logpRollout', 'entropyOld', 'sumP2Old', 'out'],
  uniform: TRAJ_STATS_UNIFORM,
  values: (c: TrajStatsConfig) => ({ numTraj: c.numTraj, tp: c.tp }),
  workgroups: (c) => Math.ceil(c.numTraj / TRAJ_STATS_WORKGROUP_SIZE),
});
