/**
 * Policy loss per policy-token row, for every ratio mode, with a KL to the reference, and its
 * derivative w.r.t. the row's log-prob (kernel `ppoLoss.wgsl`; docs/METHODS.md 1.4, 1.5, 2, 4.5, 5.8, 5.12).
 * Rows: trajectory n owns rows n*Tp .. n*Tp+Tp-1; row j of n is in turn floor(j / actionLen).
 * lambda = clamp(l - l_old, -20, 20) is the token log-ratio; `seqLog` holds seqRatio.ts outputs.
 *
 * ratioMode 0, token (PPO/GRPO/DAPO; verl `compute_policy_loss_vanilla`):
 *   r = exp(lambda),  L1 = -A r,  L2 = -A clip(r, 1 - eps_low, 1 + eps_high),  Lc = max(L1, L2)
 *   A < 0: L = min(Lc, -A c)  (dual clip).  dL/dl = -A r on the unclipped branch, else 0.
 * ratioMode 1, sequence (GSPO-token as verl `compute_policy_loss_gspo`): log s = min(seqLog[n], 10)
 *   ('sequence' mean of lambda); every row of n has ratio s; the clip tests log s against
 *   [log(1 - eps_low), log(1 + eps_high)]; L = max(-A s, -A clip(s)); no dual clip. In the token
 *   formulation log s_t = sg[log s] + l_t - sg[l_t], so dL/dl_t = -A s on the unclipped branch.
 * ratioMode 2, geometric (GMPO; verl `compute_policy_loss_geo_mean`): s = exp(seqLog[n]), the
 *   'geometric' mean of lambda* (eps_low/eps_high are LOG-SPACE bounds here: lambda clipped to
 *   [-eps_low, +eps_high], one-sided by sign of A). L = -A s; dL/dl_t = -A s where the token was not
 *   clipped (lambda*_t == lambda_t), else 0; clip flag = the side that clipped it.
 * ratioMode 3, turn stage k (SeeUPO, docs/METHODS.md 5.8; the paper's formulas were not found, so this is
 *   the INFERRED HAPPO-style form, to verify against the paper): only rows of turn k contribute,
 *   u = exp(clamp(seqLog[n*T + k], -20, 20)) ('turn' means), M = A exp(clamp(sum_{j>k} seqLog[n*T + j],
 *   -20, 20)) (the already-updated later turns, stop-gradient), L = max(-M u, -M clip(u)) clipped as
 *   mode 1; dL/dl = -M u on the unclipped branch. Other turns' rows: loss 0, dlogp 0, clip 0, ratio
 *   = their own turn's u (display), no KL.
 * ratioMode 4, step (GSPO per step: SAMPO's rows are steps in its reference code): as mode 1 with
 *   the row's turn for the sequence, log s = min(seqLog[n*T + turn], 10) ('turn' means).
 * ratioMode 5, sft (ReGFT's fine-tuning stage): token cross-entropy L = -A l with A the row's
 *   weight of the kept trajectory (1), dL/dl = -A; no ratio and no clip (ratio = exp(lambda) for
 *   display, clip 0), so a token the policy already moved keeps its whole gradient.
 * ratioMode 6, cispo (verl `compute_policy_loss_cispo`, arXiv 2506.13585): the IS weight itself is
 *   clipped and its gradient stopped, w = clip(exp(lambda), 1 - eps_low, 1 + eps_high) (in log space),
 *   L = -sg(w) A l, dL/dl = -w A: every token keeps a gradient, a clipped one with the bound as
 *   weight; clip flag = the side w was clipped at.
 * ratioMode 7, sapo (verl `compute_policy_loss_sapo`, arXiv 2511.20347): a soft gate instead of a
 *   clip, f(r) = sigmoid(tau (r - 1)) 4 / tau with tau = tau_pos for A > 0, tau_neg otherwise (carried
 *   in clipLow and clipHigh), L = -f(r) A, dL/dl = -4 A s (1 - s) r with s the sigmoid; clip 0.
 * KL (klType, d = l - l_ref): 0 k3 = clamp(exp(k) - k - 1, -10, 10), k = clamp(-d, -20, 20), grad
 *   1 - exp(k); 1 k1 = d, grad 1; 2 k2 = d^2 / 2, grad d.
 * Token loss = w (c L + beta kl), w = the aggregation weight (0 where masked): its contribution to the
 * aggregated loss; c = the rollout correction's stopped IS weight of the row (1 without one,
 * docs/METHODS.md 5.19), on the policy term only as verl weights pg_losses and not its KL loss. Every clamp (lambda at +-20, log s at 10, k3) zeroes the gradient where it bites,
 * so dlogp is the exact derivative of the computed loss. Clips are taken in log space, exp once.
 */
import { defineKernel } from '../pipeline';
import { LOSS_UNIFORMS, PPO_LOSS_UNIFORM } from './lossUniforms';
import ppoLossWGSL from './ppoLoss.wgsl?raw';
import { gmpoClip } from './seqRatio';

/** WGSL `u.ratioMode` codes. */
export const RATIO_MODES = { token: 0, sequence: 1, geometric: 2, turn: 3, step: 4, sft: 5, cispo: 6, sapo: 7 } as const;
/** WGSL `u.klType` codes (docs/METHODS.md 1.4). */
export const KL_TYPES = { k3: 0, k1: 1, k2: 2 } as const;

export interface PpoLossOptions {
  /** eps_low: ratio offset (modes 0, 1, 3) or log-space bound (mode 2, GMPO). */
  clipLow: number;
  /** eps_high: as clipLow. */
  clipHigh: number;
  /** Dual-clip c (mode 0 only). */
  dualClip: number;
  /** beta, the KL coefficient. */
  klCoef: number;
  /** 0 token (default), 1 sequence (GSPO), 2 geometric (GMPO), 3 turn stage (SeeUPO), 4 step. */
  ratioMode?: number;
  /** 0 k3 (default), 1 k1, 2 k2. */
  klType?: number;
  /** Policy-token rows per trajectory (modes 1-3). */
  tp?: number;
  /** Rows per turn (mode 3). */
  actionLen?: number;
  /** Turns T per trajectory: seqLog has T entries per trajectory in mode 3. */
  maxTurns?: number;
  /** The turn k being updated (mode 3). */
  stage?: number;
  /** Absolute row of the call's first row (a multiple of tp); indexes seqLog by absolute trajectory. */
  rowBase?: number;
}

export interface PpoLossOut<F extends Float32Array | Float64Array = Float32Array> {
  /** [R] weighted token loss (its contribution to the aggregated loss) */
  loss: F;
  /** [R] d(aggregated loss)/d(logp) */
  dlogp: F;
  /** [R] importance ratio (token r, sequence s, or the row's turn u) */
  ratio: F;
  /** [R] -1 clipped on the low side, 1 on the high side, 0 not clipped */
  clip: Int32Array;
  /** [R] KL estimate to the reference (of klType) */
  kl: F;
}

/** The inputs of ppoLossCpu: logp, logpOld, logpRef, adv, weight, options, seqLog. */
type PpoLossArgs = [
  logp: ArrayLike<number>,
  logpOld: ArrayLike<number>,
  logpRef: ArrayLike<number>,
  adv: ArrayLike<number>,
  weight: ArrayLike<number>,
  o: PpoLossOptions,
  seqLog?: ArrayLike<number>,
  /** The call's rows' IS weights on the policy term (absent: 1). */
  isWeight?: ArrayLike<number>,
];

/**
 * The CPU reference (outputs in f32). logp .. weight hold the call's rows (index 0 = absolute row
 * rowBase); seqLog is the whole step's seqRatio output, indexed by absolute trajectory (required
 * for ratioMode 1-3).
 */
export function ppoLossCpu(...args: PpoLossArgs): PpoLossOut {
  const R = args[0].length;
  const out = { loss: new Float32Array(R), dlogp: new Float32Array(R), ratio: new Float32Array(R), clip: new Int32Array(R), kl: new Float32Array(R) };
  ppoLossInto(out, ...args);
  return out;
}

/** ppoLossCpu with f64 outputs and no f32 rounding anywhere (finite-difference gradient checks). */
export function ppoLossCpu64(...args: PpoLossArgs): PpoLossOut<Float64Array> {
  const R = args[0].length;
  const out = { loss: new Float64Array(R), dlogp: new Float64Array(R), ratio: new Float64Array(R), clip: new Int32Array(R), kl: new Float64Array(R) };
  ppoLossInto(out, ...args);
  return out;
}

const clamp = (x: number, lo: number, hi: number) => Math.min(Math.max(x, lo), hi);

/** KL value and d/dlogp of one row (d = logp - logpRef). */
function klTerm(klType: number, logp: number, logpRef: number): [number, number] {
  const d = logp - logpRef;
  if (klType === KL_TYPES.k1) return [d, 1];
  if (klType === KL_TYPES.k2) return [0.5 * d * d, d];
  const k = clamp(-d, -20, 20);
  const k3raw = Math.exp(k) - k - 1;
  const k3 = clamp(k3raw, -10, 10);
  return [k3, k === -d && k3 === k3raw ? 1 - Math.exp(k) : 0];
}

/** The clipped surrogate on a log-ratio: value, gradient factor and clip flag (modes 0, 1, 3). */
function clipped(logR: number, A: number, loLog: number, hiLog: number): [number, number, number] {
  const r = Math.exp(logR);
  const L1 = -A * r;
  const L2 = -A * Math.exp(clamp(logR, loLog, hiLog));
  return [Math.max(L1, L2), L1 >= L2 ? -A * r : 0, L2 > L1 ? (logR < 0 ? -1 : 1) : 0];
}

function ppoLossInto(out: PpoLossOut<Float32Array | Float64Array>, ...[logp, logpOld, logpRef, adv, weight, o, seqLog, isWeight]: PpoLossArgs): void {
  const R = logp.length;
  const mode = o.ratioMode ?? RATIO_MODES.token;
  const klType = o.klType ?? KL_TYPES.k3;
  const tp = o.tp ?? 1;
  const actionLen = o.actionLen ?? tp;
  const T = o.maxTurns ?? 1;
  const k = o.stage ?? 0;
  const rowBase = o.rowBase ?? 0;
  const tokenLevel = mode === RATIO_MODES.token || mode === RATIO_MODES.sft || mode === RATIO_MODES.cispo || mode === RATIO_MODES.sapo;
  if (!tokenLevel) {
    if (!seqLog) throw new Error(`ppoLossCpu: ratioMode ${mode} needs seqLog`);
    if (!(tp >= 1) || rowBase % tp !== 0) throw new Error(`ppoLossCpu: rowBase ${rowBase} is not a multiple of tp ${tp}`);
  }
  if (mode === RATIO_MODES.turn && !(k >= 0 && k < T && actionLen >= 1)) throw new Error(`ppoLossCpu: stage ${k} outside 0..${T - 1}`);
  // Log-space clip bounds: GMPO clips lambda directly, the others log(1 -+ eps).
  const geo = mode === RATIO_MODES.geometric;
  const loLog = geo ? -o.clipLow : Math.log(1 - o.clipLow);
  const hiLog = geo ? o.clipHigh : Math.log(1 + o.clipHigh);
  for (let r = 0; r < R; r++) {
    const i = rowBase + r;
    const n = Math.floor(i / tp);
    const A = adv[r]!;
    const d = logp[r]! - logpOld[r]!;
    const lam = clamp(d, -20, 20);
    const own = lam === d ? 1 : 0; // 0 where the +-20 clamp cut this token's own gradient
    let L: number;
    let g: number;
    let clip: number;
    let ratio: number;
    let active = true;
    if (mode === RATIO_MODES.token) {
      ratio = Math.exp(lam);
      [L, g, clip] = clipped(lam, A, loLog, hiLog);
      g *= own;
      if (A < 0 && L > -A * o.dualClip) {
        L = -A * o.dualClip;
        g = 0;
        clip = 1;
      }
    } else if (mode === RATIO_MODES.sequence || mode === RATIO_MODES.step) {
      const sl = mode === RATIO_MODES.step ? seqLog![n * T + Math.min(Math.floor((i - n * tp) / actionLen), T - 1)]! : seqLog![n]!;
      const logS = Math.min(sl, 10);
      ratio = Math.exp(logS);
      [L, g, clip] = clipped(logS, A, loLog, hiLog);
      g *= own * (logS === sl ? 1 : 0);
    } else if (mode === RATIO_MODES.cispo) {
      ratio = Math.exp(lam);
      const w = Math.exp(clamp(lam, loLog, hiLog));
      [L, g, clip] = [-w * A * logp[r]!, -w * A, lam > hiLog ? 1 : lam < loLog ? -1 : 0];
    } else if (mode === RATIO_MODES.sapo) {
      ratio = Math.exp(lam);
      const tau = A > 0 ? o.clipLow : o.clipHigh;
      const s = 1 / (1 + Math.exp(-tau * (ratio - 1)));
      [L, g, clip] = [-(4 / tau) * s * A, -4 * A * s * (1 - s) * ratio * own, 0];
    } else if (mode === RATIO_MODES.sft) {
      ratio = Math.exp(lam);
      [L, g, clip] = [-A * logp[r]!, -A, 0];
    } else if (mode === RATIO_MODES.geometric) {
      ratio = Math.exp(clamp(seqLog![n]!, -20, 20));
      const star = gmpoClip(lam, A, loLog, hiLog);
      L = -A * ratio;
      g = star === lam ? -A * ratio * own : 0;
      clip = star < lam ? 1 : star > lam ? -1 : 0;
    } else {
      const turn = Math.floor((i - n * tp) / actionLen);
      ratio = turn < T ? Math.exp(clamp(seqLog![n * T + turn]!, -20, 20)) : 1;
      active = turn === k;
      if (active) {
        let later = 0;
        for (let j = k + 1; j < T; j++) later += seqLog![n * T + j]!;
        const M = A * Math.exp(clamp(later, -20, 20));
        [L, g, clip] = clipped(clamp(seqLog![n * T + k]!, -20, 20), M, loLog, hiLog);
        g *= own;
      } else {
        [L, g, clip] = [0, 0, 0];
      }
    }
    const [kl, gk] = klTerm(klType, logp[r]!, logpRef[r]!);
    const w = weight[r]!;
    const c = isWeight ? isWeight[r]! : 1;
    out.loss[r] = active ? w * (c * L + o.klCoef * kl) : 0;
    out.dlogp[r] = active ? w * (c * g + o.klCoef * gk) : 0;
    out.ratio[r] = ratio;
    out.clip[r] = w === 0 ? 0 : clip;
    out.kl[r] = kl;
  }
}

export const PPO_LOSS_WORKGROUP_SIZE = 64;


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
  /** Absent: no IS weights; else absolute row i's IS weight is weight[isBase + i] (the weight buffer's second half). */
  isBase?: number;
}

/**
 * ppoLossCpu on the GPU: buffers logp, logpOld, logpRef, adv, weight [R] (indexed by absolute row
 * rowBase + r; with isBase, the IS weights follow at isBase + r), seqLog (seqRatio's output, [N] or [N * T] by absolute trajectory; any buffer of at
 * least 4 bytes in mode 0, which never reads it), and the outputs dlogp [R] and out [R] PpoRow
 * (PPO_ROW_WORDS words per row; unpackPpoRows splits them). 8 storage buffers: the WebGPU default
 * maxStorageBuffersPerShaderStage.
 */
export const ppoLossKernel = defineKernel({
  label: 'ppoLoss',
  wgsl: ppoLossWGSL,
  fileUniforms: LOSS_UNIFORMS,
  entryPoint: 'ppoLoss',
  workgroupSize: PPO_LOSS_WORKGROUP_SIZE,
  bindings: { logp: 2, logpOld: 3, logpRef: 6, adv: 4, weight: 7, seqLog: 8, dlogp: 9, out: 10 },
  uniform: PPO_LOSS_UNIFORM,
  check: (c: PpoLossConfig) => {
    const mode = c.ratioMode ?? RATIO_MODES.token;
    const tp = c.tp ?? 1;
    if (!Object.values(RATIO_MODES).includes(mode as 0)) throw new Error(`ppoLoss: unknown ratioMode ${mode}`);
    if (!Object.values(KL_TYPES).includes((c.klType ?? 0) as 0)) throw new Error(`ppoLoss: unknown klType ${c.klType}`);
    const tokenLevel = mode === RATIO_MODES.token || mode === RATIO_MODES.sft || mode === RATIO_MODES.cispo || mode === RATIO_MODES.sapo;
    if (!tokenLevel && !(tp >= 1 && (c.rowBase ?? 0) % tp === 0 && c.numRows % tp === 0)) {
      throw new Error(`ppoLoss: ratioMode ${mode} needs whole trajectories of tp = ${tp} rows`);
    }
    if (mode === RATIO_MODES.turn && !((c.actionLen ?? 0) >= 1 && (c.stage ?? 0) < (c.maxTurns ?? 1))) {
      throw new Error(`ppoLoss: turn mode needs actionLen >= 1 and stage ${c.stage} < maxTurns ${c.maxTurns}`);
    }
  },
  values: (c: PpoLossConfig) => {
    const geo = c.ratioMode === RATIO_MODES.geometric;
    // SAPO has no clip: the two slots carry its temperatures tau_pos and tau_neg as they are.
    const sapo = c.ratioMode === RATIO_MODES.sapo;
    return {
      numRows: c.numRows,
      rowBase: c.rowBase ?? 0,
      // log(0) = -Infinity at clipLow = 1: the largest finite f32 clamps the same (log r >= -20).
      loLog: geo ? -c.clipLow : sapo ? c.clipLow : Math.max(Math.log(1 - c.clipLow), -3.4e38),
      hiLog: geo || sapo ? c.clipHigh : Math.log(1 + c.clipHigh),
      dualClip: c.dualClip,
      klCoef: c.klCoef,
      ratioMode: c.ratioMode ?? RATIO_MODES.token,
      klType: c.klType ?? KL_TYPES.k3,
      tp: c.tp ?? 1,
      actionLen: c.actionLen ?? c.tp ?? 1,
      maxTurns: c.maxTurns ?? 1,
      stage: c.stage ?? 0,
      isWeights: c.isBase === undefined ? 0 : 1,
      isBase: c.isBase ?? 0,
    };
  },
  workgroups: (c) => Math.ceil(c.numRows / PPO_LOSS_WORKGROUP_SIZE),
});
