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
import { defineKernel, uniformLayout } from './pipeline';
import ppoLossWGSL from './ppoLoss.wgsl?raw';

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

export const PPO_LOSS_WORKGROUP_SIZE = 64;

/** Mirrors `struct PpoLoss` in ppoLoss.wgsl. */
export const PPO_LOSS_UNIFORM = uniformLayout([
  ['numRows', 'u32'], ['rowBase', 'u32'], ['loLog', 'f32'], ['hiLog', 'f32'], ['dualClip', 'f32'], ['klCoef', 'f32'],
] as const);

/** `struct PpoRow` in ppoLoss.wgsl: 4 words per row, loss, ratio, kl (f32) and clip (i32). */
export const PPO_ROW_WORDS = 4;

/** Splits a read-back PpoRow array into the arrays ppoLossCpu returns (dlogp is a buffer of its own). */
export function unpackPpoRows(raw: ArrayBuffer, rows: number): Omit<PpoLossOut, 'dlogp'> {
  const f = new Float32Array(raw, 0, rows * PPO_ROW_WORDS);
  const i = new Int32Array(raw, 0, rows * PPO_ROW_WORDS);
  const out = { loss: new Float32Array(rows), ratio: new Float32Array(rows), kl: new Float32Array(rows), clip: new Int32Array(rows) };
  for (let r = 0; r < rows; r++) {
    out.loss[r] = f[r * 4]!;
    out.ratio[r] = f[r * 4 + 1]!;
    out.kl[r] = f[r * 4 + 2]!;
    out.clip[r] = i[r * 4 + 3]!;
  }
  return out;
}

export interface PpoLossConfig extends PpoLossOptions {
  numRows: number;
  /** Row r of the call is rowBase + r in every array (default 0). */
  rowBase?: number;
}

/**
 * ppoLossCpu on the GPU: buffers logp, logpOld, logpRef, adv, weight, and the outputs dlogp [R]
 * and out [R] PpoRow (PPO_ROW_WORDS words per row; unpackPpoRows splits them).
 */
export const ppoLossKernel = defineKernel({
  label: 'ppoLoss',
  wgsl: ppoLossWGSL,
  workgroupSize: PPO_LOSS_WORKGROUP_SIZE,
  bindings: ['logp', 'logpOld', 'logpRef', 'adv', 'weight', 'dlogp', 'out'],
  uniform: PPO_LOSS_UNIFORM,
  values: (c: PpoLossConfig) => ({
    numRows: c.numRows,
    rowBase: c.rowBase ?? 0,
    // log(0) = -Infinity at clipLow = 1: the largest finite f32 clamps the same (log r >= -20).
    loLog: Math.max(Math.log(1 - c.clipLow), -3.4e38),
    hiLog: Math.log(1 + c.clipHigh),
    dualClip: c.dualClip,
    klCoef: c.klCoef,
  }),
  workgroups: (c) => Math.ceil(c.numRows / PPO_LOSS_WORKGROUP_SIZE),
});
export const createPpoLossKernel = (device: GPUDevice) => ppoLossKernel.create(device);
