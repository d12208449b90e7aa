/**
 * ARLArena's diagnosis of a crash (docs/ARENA.md "Diagnosis"), the metric `neg_out_grad_share`: the
 * share of the update's gradient that comes from negative-advantage tokens whose importance ratio lies
 * outside the bounds a strict clip would impose, [1 - 0.2, 1 + 0.2] (PPO's default), whatever clip the
 * run itself uses. Over the masked rows of the last epoch (each row's last loss evaluation, as the
 * backends leave dlogp and logp: one optimizer step per minibatch, so the last epoch's steps pooled):
 *
 *   share = sum_{A_i < 0, lambda_i outside [log 0.8, log 1.2]} |g_i|  /  sum_i |g_i|
 *
 * g_i = d(aggregated loss)/d(logp_i): the aggregation weight, the method's gradient factor and the KL
 * term's included; lambda_i = clamp(logp_i - logp_old_i, -20, 20), the token's own log-ratio even
 * under a sequence-level clip. 0 when the denominator is 0. A tolerant clip (CISPO, SAPO) keeps these
 * tokens' gradients, a hard token clip zeroes most of them, so the share tells the clips apart and,
 * per ARLArena, rises before a crash.
 */
import negOutShareWGSL from './negOutShare.wgsl?raw';
import { defineKernel, uniformLayout } from '../pipeline';

/** The strict clip whose bounds define "outside": PPO's default 0.2 on both sides. */
export const STRICT_CLIP = 0.2;
/** Its log-space bounds, as the f32 numbers the kernel compares with. */
export const NEG_OUT_LOG_BOUNDS: readonly [number, number] = [Math.fround(Math.log(1 - STRICT_CLIP)), Math.fround(Math.log(1 + STRICT_CLIP))];

export interface NegOutInput {
  mask: ArrayLike<number>;
  adv: ArrayLike<number>;
  logp: ArrayLike<number>;
  logpOld: ArrayLike<number>;
  dlogp: ArrayLike<number>;
}

/** Whether row i counts: masked in, A < 0, and its f32 log-ratio (as the kernel forms it) outside the bounds. */
export function negOutRow(x: NegOutInput, i: number): boolean {
  const lam = Math.min(Math.max(Math.fround(x.logp[i]! - x.logpOld[i]!), -20), 20);
  return x.mask[i] !== 0 && x.adv[i]! < 0 && (lam < NEG_OUT_LOG_BOUNDS[0] || lam > NEG_OUT_LOG_BOUNDS[1]);
}

/** The share, in float64 (the kernel sums in f32). */
export function negOutShareCpu(x: NegOutInput): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < x.mask.length; i++) {
    if (x.mask[i] === 0) continue;
    const g = Math.abs(x.dlogp[i]!);
    den += g;
    if (negOutRow(x, i)) num += g;
  }
  return den > 0 ? num / den : 0;
}

export const NEG_OUT_WORKGROUP_SIZE = 256;

export const NEG_OUT_UNIFORM = uniformLayout('NegOutShare', [['numRows', 'u32'], ['loLog', 'f32'], ['hiLog', 'f32']] as const);

export interface NegOutConfig {
  numRows: number;
}

/**
 * negOutShareCpu on the GPU, one workgroup, once per update after the last optimizer step: buffers
 * mask, adv, logp, logpOld, dlogp [numRows] and out [1] (the share). A single workgroup walks every
 * row (5 words each); at 589,824 rows that is about 12 MB read by one compute unit, a few tens of
 * microseconds on a large GPU, next to the update's milliseconds (not yet timed on the H200).
 */
export const negOutShareKernel = defineKernel({
  label: 'negOutShare',
  wgsl: negOutShareWGSL,
  workgroupSize: NEG_OUT_WORKGROUP_SIZE,
  bindings: ['mask', 'adv', 'logp', 'logpOld', 'dlogp', 'out'],
  uniform: NEG_OUT_UNIFORM,
  values: (c: NegOutConfig) => ({ numRows: c.numRows, loLog: NEG_OUT_LOG_BOUNDS[0], hiLog: NEG_OUT_LOG_BOUNDS[1] }),
  workgroups: () => 1,
});
