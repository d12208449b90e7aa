/**
 * Each trajectory's own policy-gradient norm, as VCPO's off-policy optimal baseline weighs it
 * (docs/METHODS.md 5.10; kernel `trajGradNorm.wgsl`):
 *   g2_n = c_n^2 S_n,   S_n = || sum_t m_t grad_theta log pi(a_t | ctx_t) ||^2   over all parameters,
 *   c_n  = min(exp(logIS_n), isCap)   (1 when isCap = 0: no IS weight),
 * the squared norm of the gradient of trajectory n's own loss with advantage 1 and its truncated
 * sequence IS weight, summed over its tokens (mit-han-lab/vcpo@c7f030f0 megatron_actor.py:756-788
 * multiplies the seq-mean-token-mean loss's norm back by the response length). Evaluated at the
 * parameters before the update, where every PPO ratio is 1, so the loss's gradient is c_n times the
 * score's.
 *
 * The gradient is never formed: per-sample norms from the layer structure. With dz_t the logit
 * gradient of row t (logitGrad with dlogp = m_t), da_t = (1 - h_t^2) W2 dz_t (hiddenGrad) and
 * x_t = concat_k emb[ctx_k(t)] the first layer's input,
 *   ||dW2||^2 + ||db2||^2 = sum_{t,s} (h_t . h_s + 1)(dz_t . dz_s)
 *   ||dW1||^2 + ||db1||^2 = sum_{t,s} (x_t . x_s + 1)(da_t . da_s)
 *   ||demb||^2            = sum_tok || sum_{(t,k): ctx_k(t) = tok} W1_k^T da_t ||^2
 * with W1_k the D rows of slot k. Work per trajectory Tp^2 (2H + V + K D) + Tp K D H, against
 * a full backward's V K D H per trajectory for the emb and W1 gradients alone. Rows with m = 0
 * add nothing and are skipped, never multiplied.
 */
import { contextToken, hiddenDaCpu, paramLayout, vocabToken, type MlpDims } from './mlp';
import { logitGradCpu } from '../softmax/logitGrad';
import { defineKernel, uniformLayout } from '../pipeline';
import trajGradNormWGSL from './trajGradNorm.wgsl?raw';

export interface TrajGradNormInput {
  params: Float32Array;
  dims: MlpDims;
  /** [N, L] tokens. */
  seq: Int32Array | Uint32Array;
  L: number;
  /** [N * Tp] flat positions of the training rows, trajectory by trajectory. */
  rowPos: Uint32Array;
  /** [N * Tp, H] hidden activations of the rows under the parameters. */
  h: Float32Array;
  /** [N * Tp, V] logits of the rows (temperature-scaled, grammar-masked). */
  z: Float32Array;
  /** [N * Tp] 0/1 loss mask. */
  mask: Float32Array;
  temperature: number;
  /** [N] log sequence IS weights (trajStats.logIS). */
  logIS: Float32Array;
  /** Truncation of the IS weight; 0: no IS weight. */
  isCap: number;
}

/** c_n^2: the squared truncated IS weight the trajectory's loss carries. */
export function truncatedIsSquared(logIS: number, isCap: number): number {
  if (!(isCap > 0)) return 1;
  const c = Math.exp(Math.min(logIS, Math.log(isCap)));
  return c * c;
}

/** g2 per trajectory [N]: c_n^2 S_n (see the module doc). */
export function trajGradNormCpu(s: TrajGradNormInput, Tp: number): Float32Array {
  const { V, K, D, H } = s.dims;
  const P = paramLayout(s.dims);
  const { params, h, mask, seq, rowPos } = s;
  const N = Tp > 0 ? Math.floor(mask.length / Tp) : 0;
  const KD = K * D;
  const out = new Float32Array(N);
  // The score's logit and hidden gradients, as the GPU backend takes them: logitGrad with
  // dlogp = mask, then back through W2 and tanh (the backward pass's own references).
  const dzAll = logitGradCpu(s.z, V, seq, rowPos, mask, s.temperature);
  const daAll = hiddenDaCpu(params, s.dims, mask.length, h, dzAll);
  // Per live row of the trajectory: dz [V], da [H], h [H], x [K D], and W1_k^T da [K D].
  const dz = new Float64Array(Tp * V);
  const da = new Float64Array(Tp * H);
  const hh = new Float64Array(Tp * H);
  const x = new Float64Array(Tp * KD);
  const dx = new Float64Array(Tp * KD);
  const tok = new Int32Array(Tp * K);
  const w1 = Float64Array.from(params.subarray(P.w1, P.w1 + KD * H));
  const emb = new Float64Array(V * D);
  const seen = new Int32Array(V).fill(-1);
  for (let n = 0; n < N; n++) {
    let live = 0;
    for (let j = 0; j < Tp; j++) {
      const r = n * Tp + j;
      const m = mask[r]!;
      if (m === 0) continue;
      const q = live++;
      for (let v = 0; v < V; v++) dz[q * V + v] = dzAll[r * V + v]!;
      for (let i = 0; i < H; i++) {
        hh[q * H + i] = h[r * H + i]!;
        da[q * H + i] = daAll[r * H + i]!;
      }
      for (let k = 0; k < K; k++) {
        const t = vocabToken(contextToken(seq, rowPos[r]!, s.L, K, k), V);
        tok[q * K + k] = t;
        for (let d = 0; d < D; d++) {
          x[q * KD + k * D + d] = params[P.emb + t * D + d]!;
          let g = 0;
          const row = (k * D + d) * H;
          for (let i = 0; i < H; i++) g += w1[row + i]! * da[q * H + i]!;
          dx[q * KD + k * D + d] = g;
        }
      }
    }
    // Row pairs, each unordered pair once (twice its product) plus the diagonal.
    let sum = 0;
    for (let t = 0; t < live; t++) {
      for (let u = 0; u <= t; u++) {
        let ph = 1;
        let pd = 0;
        for (let i = 0; i < H; i++) {
          ph += hh[t * H + i]! * hh[u * H + i]!;
          pd += da[t * H + i]! * da[u * H + i]!;
        }
        let pz = 0;
        for (let v = 0; v < V; v++) pz += dz[t * V + v]! * dz[u * V + v]!;
        let px = 1;
        for (let i = 0; i < KD; i++) px += x[t * KD + i]! * x[u * KD + i]!;
        sum += (u === t ? 1 : 2) * (ph * pz + px * pd);
      }
    }
    // The embedding rows: one D-vector per distinct context token, summed in place.
    let used = 0;
    for (let t = 0; t < live; t++) {
      for (let k = 0; k < K; k++) {
        const key = tok[t * K + k]!;
        if (seen[key]! < 0) {
          seen[key] = used++;
          emb.fill(0, key * D, (key + 1) * D);
        }
        for (let d = 0; d < D; d++) emb[key * D + d]! += dx[t * KD + k * D + d]!;
      }
    }
    for (let t = 0; t < live; t++) {
      for (let k = 0; k < K; k++) {
        const key = tok[t * K + k]!;
        if (seen[key]! < 0) continue;
        for (let d = 0; d < D; d++) sum += emb[key * D + d]! * emb[key * D + d]!;
        seen[key] = -1;
      }
    }
    out[n] = truncatedIsSquared(s.logIS[n]!, s.isCap) * sum;
  }
  return out;
}

/** Lanes per trajectory; a power of two (their partial sums meet in a halving tree). */
export const TRAJ_GRAD_NORM_WORKGROUP_SIZE = 64;

/** `struct TrajGradNorm` of trajGradNorm.wgsl. */
export const TRAJ_GRAD_NORM_UNIFORM = uniformLayout('TrajGradNorm', [
  ['numTraj', 'u32'], ['tp', 'u32'], ['seqLen', 'u32'], ['vocab', 'u32'], ['context', 'u32'], ['embed', 'u32'],
  ['hidden', 'u32'], ['w1Off', 'u32'], ['isCap', 'f32'],
] as const);

export interface TrajGradNormConfig {
  numTraj: number;
  tp: number;
  seqLen: number;
  dims: MlpDims;
  isCap: number;
}

/**
 * trajGradNormCpu on the GPU: buffers params, h, dz, da ([N * tp] rows, dz and da of the loss
 * sum_t m_t log pi: logitGrad with dlogp = mask, then hiddenGrad), seq, rowPos, mask, and stats
 * (trajStats' output, whose g2 it overwrites).
 */
export const trajGradNormKernel = defineKernel({
  label: 'trajGradNorm',
  wgsl: trajGradNormWGSL,
  workgroupSize: TRAJ_GRAD_NORM_WORKGROUP_SIZE,
  bindings: ['params', 'h', 'dz', 'da', 'seq', 'rowPos', 'mask', 'stats'],
  uniform: TRAJ_GRAD_NORM_UNIFORM,
  values: (c: TrajGradNormConfig) => {
    if (!(c.isCap >= 0)) throw new Error(`trajGradNorm: isCap ${c.isCap} must be >= 0`);
    const P = paramLayout(c.dims);
    return {
      numTraj: c.numTraj, tp: c.tp, seqLen: c.seqLen, vocab: c.dims.V, context: c.dims.K, embed: c.dims.D,
      hidden: c.dims.H, w1Off: P.w1, isCap: c.isCap,
    };
  },
  // One workgroup per trajectory: its lanes share the row pairs and the embedding entries.
  workgroups: (c) => c.numTraj,
});
