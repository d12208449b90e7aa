/**
 * Clipped surrogate per token, with separate low/high clip, dual clip and a k3 KL to the reference,
 * and its derivative w.r.t. the token log-prob (kernel `ppoLoss.wgsl`; METHODS.md 1.4, 1.5, verl
 * `compute_policy_loss_vanilla`):
 *   log r = clamp(l - l_old, -20, 20),  r = exp(log r)
 *   L1 = -A r,  L2 = -A clip(r, 1 - eps_low, 1 + eps_high),  Lc = max(L1, L2)
 *   A < 0: L = min(Lc, -A c)                                    (dual clip)
 *   k3 = clamp(exp(k) - k - 1, -10, 10), k = clamp(l_ref - l, -20, 20)
 *   token loss = w (L + beta k3),  w = the aggregation weight (0 where masked)
 * The clip is applied in log space (log r against log(1 +- eps)) and exp is taken once.
 * The gradient follows the active branch: -A r where unclipped, else 0; k3 gives 1 - exp(k).
 */

export interface PpoLossOptions {
  clipLow: number;
  clipHigh: number;
  dualClip: number;
  klCoef: number;
}

export interface PpoLossOut {
  /** [R] weighted token loss (its contribution to the aggregated loss) */
  loss: Float32Array;
  /** [R] d(aggregated loss)/d(logp) */
  dlogp: Float32Array;
  /** [R] importance ratio */
  ratio: Float32Array;
  /** [R] -1 clipped on the low side, 1 on the high side, 0 not clipped */
  clip: Int32Array;
  /** [R] k3 KL estimate to the reference */
  kl: Float32Array;
}

export function ppoLossCpu(
  logp: Float32Array,
  logpOld: Float32Array,
  logpRef: Float32Array,
  adv: Float32Array,
  weight: Float32Array,
  o: PpoLossOptions,
): PpoLossOut {
  const R = logp.length;
  const out: PpoLossOut = {
    loss: new Float32Array(R),
    dlogp: new Float32Array(R),
    ratio: new Float32Array(R),
    clip: new Int32Array(R),
    kl: new Float32Array(R),
  };
  const loLog = Math.log(1 - o.clipLow);
  const hiLog = Math.log(1 + o.clipHigh);
  for (let i = 0; i < R; i++) {
    const A = adv[i]!;
    const d = logp[i]! - logpOld[i]!;
    const logR = Math.min(Math.max(d, -20), 20);
    const r = Math.exp(logR);
    const rc = Math.exp(Math.min(Math.max(logR, loLog), hiLog));
    const L1 = -A * r;
    const L2 = -A * rc;
    let L = Math.max(L1, L2);
    let g = L1 >= L2 && logR === d ? -A * r : 0;
    let clip = L2 > L1 ? (logR < 0 ? -1 : 1) : 0;
    if (A < 0 && L > -A * o.dualClip) {
      L = -A * o.dualClip;
      g = 0;
      clip = 1;
    }
    const kArg = logpRef[i]! - logp[i]!;
    const k = Math.min(Math.max(kArg, -20), 20);
    const k3raw = Math.exp(k) - k - 1;
    const k3 = Math.min(Math.max(k3raw, -10), 10);
    const gk = k === kArg && k3 === k3raw ? 1 - Math.exp(k) : 0;
    const w = weight[i]!;
    out.loss[i] = w * (L + o.klCoef * k3);
    out.dlogp[i] = w * (g + o.klCoef * gk);
    out.ratio[i] = r;
    out.clip[i] = w === 0 ? 0 : clip;
    out.kl[i] = k3;
  }
  return out;
}
