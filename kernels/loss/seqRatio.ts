/**
 * Segment-level log importance ratios (kernel `ppoLoss.wgsl seqRatio`; docs/METHODS.md 2.4, 4.5, 5.8, 5.12): the
 * masked mean, over a segment's policy-token rows, of the clamped token log-ratio
 *   lambda = clamp(logp - logp_old, -20, 20)
 * and 0 for a segment with no masked-in rows. The mean of logs is the log of the geometric-mean
 * ratio, so exp() of an output never overflows (|output| <= 20). Segments by mode:
 *   'sequence'  (GSPO)     one per trajectory n:            out[n]
 *   'turn'      (SeeUPO)   one per (n, turn t):             out[n * T + t], row j of n is in turn floor(j / actionLen)
 *   'geometric' (GMPO)     one per trajectory n, of lambda* (sign-aware clip in log space):
 *       lc = clamp(lambda, -clipLow, +clipHigh),  lambda* = A > 0 ? min(lambda, lc) : A < 0 ? max(lambda, lc) : lambda
 *     (clipLow/clipHigh are log-space bounds here, GMPO's eps = 0.4, not ratio offsets as in ppoLoss).
 * Layout: trajectory n owns rows n*Tp .. n*Tp+Tp-1. A call covers rows rowBase .. rowBase+numRows-1
 * (whole trajectories) and writes the outputs of trajectories rowBase/Tp .. by ABSOLUTE index, so the
 * minibatches of one step fill one [N] (or [N * T]) buffer that ppoLoss reads as `seqLog`.
 */
import { defineKernel } from '../pipeline';
import { LOSS_UNIFORMS, SEQ_RATIO_UNIFORM } from './lossUniforms';
import lossWGSL from './ppoLoss.wgsl?raw';

export type SeqRatioMode = 'sequence' | 'turn' | 'geometric';

/** WGSL `u.mode` codes. */
export const SEQ_RATIO_MODES: Readonly<Record<SeqRatioMode, number>> = { sequence: 0, turn: 1, geometric: 2 };

export interface SeqRatioOptions {
  mode: SeqRatioMode;
  /** Policy-token rows per trajectory. */
  tp: number;
  /** Slots per turn ('turn' mode). */
  actionLen?: number;
  /** Turns T per trajectory ('turn' mode; the output has T entries per trajectory). */
  maxTurns?: number;
  /** 'geometric' mode: log-space clip bounds, lambda clipped to [-clipLow, +clipHigh]. */
  clipLow?: number;
  clipHigh?: number;
  /** First row of the call (a multiple of tp); the inputs' index 0 is this row. Default 0. */
  rowBase?: number;
}

/** Outputs per trajectory: T in 'turn' mode, else 1. */
export function seqRatioSegments(o: Pick<SeqRatioOptions, 'mode' | 'maxTurns'>): number {
  return o.mode === 'turn' ? (o.maxTurns ?? 1) : 1;
}

/** The token log-ratio both kernels use: clamp(logp - logpOld, -20, 20). */
export function clampedLogRatio(logp: number, logpOld: number): number {
  return Math.min(Math.max(logp - logpOld, -20), 20);
}

/** GMPO's sign-aware log-space clip of one token's lambda (lo = -clipLow, hi = clipHigh). */
export function gmpoClip(lambda: number, A: number, lo: number, hi: number): number {
  const lc = Math.min(Math.max(lambda, lo), hi);
  return A > 0 ? Math.min(lambda, lc) : A < 0 ? Math.max(lambda, lc) : lambda;
}

/**
 * The CPU reference. mask, logp, logpOld, adv hold the call's rows (index 0 = row rowBase; the
 * length is a whole number of trajectories). Writes out[(rowBase/tp + n) * S + s] (S =
 * seqRatioSegments) into `out` (allocated to fit when not given; pass a Float64Array to keep f64)
 * and returns it.
 */
export function seqRatioCpu<O extends Float32Array | Float64Array = Float32Array>(
  mask: ArrayLike<number>,
  logp: ArrayLike<number>,
  logpOld: ArrayLike<number>,
  adv: ArrayLike<number>,
  o: SeqRatioOptions,
  out?: O,
): O {
  const { tp } = o;
  const rowBase = o.rowBase ?? 0;
  const R = logp.length;
  if (!(tp >= 1) || R % tp !== 0 || rowBase % tp !== 0) throw new Error(`seqRatio: ${R} rows from ${rowBase} are not whole trajectories of ${tp}`);
  const S = seqRatioSegments(o);
  const actionLen = o.actionLen ?? tp;
  const n0 = rowBase / tp;
  const numTraj = R / tp;
  const dst = (out ?? new Float32Array((n0 + numTraj) * S)) as O;
  const lo = -(o.clipLow ?? 0);
  const hi = o.clipHigh ?? 0;
  for (let n = 0; n < numTraj; n++) {
    const sum = new Float64Array(S);
    const cnt = new Float64Array(S);
    for (let j = 0; j < tp; j++) {
      const i = n * tp + j;
      const m = mask[i]!;
      if (m === 0) continue;
      const s = o.mode === 'turn' ? Math.floor(j / actionLen) : 0;
      if (s >= S) continue;
      let lam = clampedLogRatio(logp[i]!, logpOld[i]!);
      if (o.mode === 'geometric') lam = gmpoClip(lam, adv[i]!, lo, hi);
      sum[s] = sum[s]! + m * lam;
      cnt[s] = cnt[s]! + m;
    }
    for (let s = 0; s < S; s++) dst[(n0 + n) * S + s] = cnt[s]! > 0 ? sum[s]! / cnt[s]! : 0;
  }
  return dst;
}

export const SEQ_RATIO_WORKGROUP_SIZE = 64;


export interface SeqRatioConfig extends SeqRatioOptions {
  /** Rows of the call (a multiple of tp). */
  numRows: number;
}

/**
 * seqRatioCpu on the GPU, one thread per segment: buffers mask, logp, logpOld, adv [rows] (indexed
 * by absolute row, rowBase + r) and out [N * S] (written at the call's absolute trajectories).
 */
export const seqRatioKernel = defineKernel({
  label: 'seqRatio',
  wgsl: lossWGSL,
  fileUniforms: LOSS_UNIFORMS,
  file: 'ppoLoss',
  entryPoint: 'seqRatio',
  workgroupSize: SEQ_RATIO_WORKGROUP_SIZE,
  bindings: { mask: 1, logp: 2, logpOld: 3, adv: 4, out: 5 },
  uniform: SEQ_RATIO_UNIFORM,
  check: (c: SeqRatioConfig) => {
    const rowBase = c.rowBase ?? 0;
    if (!(c.tp >= 1) || c.numRows % c.tp !== 0 || rowBase % c.tp !== 0) {
      throw new Error(`seqRatio: rows ${rowBase}..${rowBase + c.numRows} are not whole trajectories of ${c.tp}`);
    }
    if (c.mode === 'turn' && !((c.actionLen ?? 0) >= 1 && (c.maxTurns ?? 0) >= 1)) throw new Error('seqRatio: turn mode needs actionLen and maxTurns >= 1');
  },
  values: (c: SeqRatioConfig) => {
    const S = seqRatioSegments(c);
    return {
      numSegments: (c.numRows / c.tp) * S,
      rowBase: c.rowBase ?? 0,
      tp: c.tp,
      actionLen: c.actionLen ?? c.tp,
      segments: S,
      mode: SEQ_RATIO_MODES[c.mode],
      loLog: -(c.clipLow ?? 0),
      hiLog: c.clipHigh ?? 0,
    };
  },
  workgroups: (c) => Math.ceil(((c.numRows / c.tp) * seqRatioSegments(c)) / SEQ_RATIO_WORKGROUP_SIZE),
});
