/**
 * The ratio / clip / KL stage's references: ppoLossCpu (kernels/loss/ppoLoss.ts) in its four ratio modes
 * and three KL types, and seqRatioCpu (kernels/loss/seqRatio.ts) that feeds it.
 * Tolerances:
 * - hand-worked cases compare f32 outputs of O(1) values with formulas evaluated in f64: atol 1e-6
 *   (f32 rounding of an O(1) value is ~6e-8; the inputs themselves are rounded to f32, which moves a
 *   log-ratio by up to ~6e-8 and a ratio near 1 by as much); 2e-6 for values near 3 and 1e-5 for
 *   values near e^2..e^3, the same relative error.
 * - finite differences run entirely in f64 (ppoLossCpu64, seqRatioCpu into a Float64Array), central
 *   with h = 1e-6: truncation error ~h^2 |J'''| ~ 1e-12 and round-off ~1e-16 |J| / h ~ 1e-10, so
 *   atol 1e-8 + rtol 1e-6. Rows whose perturbation flips any clip flag (a kink within h) are
 *   skipped; each test asserts that most rows were checked.
 */
import { describe, expect, it } from 'vitest';
import {
  KL_TYPES,
  RATIO_MODES,
  ppoLossCpu,
  ppoLossCpu64,
  type PpoLossOptions,
} from '../../kernels/loss/ppoLoss';
import { PPO_LOSS_UNIFORM, SEQ_RATIO_UNIFORM } from '../../kernels/loss/lossUniforms';
import { seqRatioCpu, type SeqRatioMode } from '../../kernels/loss/seqRatio';
import { createRng } from '../../workers/core/rng';

const f32 = (a: number[]) => Float32Array.from(a);
const near = (a: number, b: number, atol = 1e-6) => expect(Math.abs(a - b)).toBeLessThanOrEqual(atol);
const BASE = { clipLow: 0.2, clipHigh: 0.2, dualClip: 3, klCoef: 0 };
const SEQ_MODE: Record<number, SeqRatioMode> = { 1: 'sequence', 2: 'geometric', 3: 'turn', 4: 'turn', 5: 'sequence', 6: 'sequence', 7: 'sequence' };

/** One trajectory of the given log-ratios (logpOld = 0, logpRef = logp), all rows masked in. */
function one(lams: number[], A: number, o: PpoLossOptions, w = 1 / lams.length) {
  const logp = f32(lams);
  const zero = new Float32Array(lams.length);
  const adv = new Float32Array(lams.length).fill(A);
  const mask = new Float32Array(lams.length).fill(1);
  const mode = o.ratioMode ?? 0;
  const seqLog = mode === 0 ? undefined : seqRatioCpu(mask, logp, zero, adv, { mode: SEQ_MODE[mode]!, tp: lams.length, actionLen: o.actionLen, maxTurns: o.maxTurns, clipLow: o.clipLow, clipHigh: o.clipHigh });
  const out = ppoLossCpu(logp, zero, logp, adv, new Float32Array(lams.length).fill(w), { tp: lams.length, ...o }, seqLog);
  return { ...out, seqLog };
}

describe('uniform layouts', () => {
  it('ppoLoss: 14 words in 64 bytes, seqRatio: 8 words (32 bytes)', () => {
    expect(PPO_LOSS_UNIFORM.size).toBe(64);
    expect(PPO_LOSS_UNIFORM.offsets.stage).toBe(44);
    expect(PPO_LOSS_UNIFORM.offsets.isBase).toBe(52);
    expect(SEQ_RATIO_UNIFORM.size).toBe(32);
  });
});

describe('seqRatioCpu', () => {
  const lp = f32([0.3, -0.1, 0.1, 9, 0.6, -0.6, 0.2, 0]);
  const old = new Float32Array(8);
  const mask = f32([1, 1, 1, 0, 1, 1, 1, 0]);
  it('sequence: masked mean of the log-ratio per trajectory', () => {
    const s = seqRatioCpu(mask, lp, old, new Float32Array(8), { mode: 'sequence', tp: 4 });
    near(s[0]!, 0.1);
    near(s[1]!, 0.2 / 3);
  });
  it('turn: one mean per (trajectory, turn), 0 for an empty turn', () => {
    const s = seqRatioCpu(mask, lp, old, new Float32Array(8), { mode: 'turn', tp: 4, actionLen: 2, maxTurns: 2 });
    near(s[0]!, 0.1);
    near(s[1]!, 0.1); // row 3 masked out
    near(s[2]!, 0);
    near(s[3]!, 0.2);
    const empty = seqRatioCpu(new Float32Array(8), lp, old, new Float32Array(8), { mode: 'turn', tp: 4, actionLen: 2, maxTurns: 2 });
    expect(Array.from(empty)).toEqual([0, 0, 0, 0]);
  });
  it('geometric: sign-aware log-space clip of each token before the mean', () => {
    const o = { mode: 'geometric' as const, tp: 4, clipLow: 0.4, clipHigh: 0.4 };
    const pos = seqRatioCpu(mask, lp, old, new Float32Array(8).fill(1), o);
    near(pos[1]!, (0.4 - 0.6 + 0.2) / 3); // A > 0: the high side is capped, the low side kept
    const neg = seqRatioCpu(mask, lp, old, new Float32Array(8).fill(-1), o);
    near(neg[1]!, (0.6 - 0.4 + 0.2) / 3); // A < 0: the low side is capped, the high side kept
    const zero = seqRatioCpu(mask, lp, old, new Float32Array(8), o);
    near(zero[1]!, 0.2 / 3); // A = 0: no clip
  });
  it('minibatch: writes the absolute trajectories rowBase/tp.. into a shared output', () => {
    const out = new Float32Array(3).fill(-7);
    seqRatioCpu(mask, lp, old, new Float32Array(8), { mode: 'sequence', tp: 4, rowBase: 4 }, out);
    expect(out[0]).toBe(-7);
    near(out[1]!, 0.1);
    near(out[2]!, 0.2 / 3);
  });
});

describe('ppoLossCpu, hand-worked', () => {
  it('token mode ignores seqLog, tp and rowBase (unchanged behaviour)', () => {
    const a = ppoLossCpu(f32([0.1, 0.5]), f32([0, 0]), f32([0, 0]), f32([1, -1]), f32([0.5, 0.5]), BASE);
    const b = ppoLossCpu(f32([0.1, 0.5]), f32([0, 0]), f32([0, 0]), f32([1, -1]), f32([0.5, 0.5]), { ...BASE, tp: 2, rowBase: 4 }, f32([9, 9, 9]));
    expect(b).toEqual(a);
    near(a.loss[0]!, -0.5 * Math.exp(0.1));
    near(a.dlogp[1]!, 0.5 * Math.exp(0.5));
  });

  it('GSPO: every row uses s = exp(mean log-ratio); gradient -A s per token', () => {
    const s = Math.exp(0.1);
    const r = one([0.3, -0.1, 0.1], 2, { ...BASE, ratioMode: RATIO_MODES.sequence });
    for (let t = 0; t < 3; t++) {
      near(r.ratio[t]!, s);
      near(r.loss[t]!, (-2 * s) / 3);
      near(r.dlogp[t]!, (-2 * s) / 3);
      expect(r.clip[t]).toBe(0);
    }
  });
  it('step (GSPO per step): each turn\'s rows use that turn\'s own s = exp(mean log-ratio of the turn)', () => {
    // Two turns of two rows: turn 0 log-ratios [0.2, 0] -> s0 = e^0.1; turn 1 [0.3, -0.3] -> s1 = 1.
    const o = { ...BASE, ratioMode: RATIO_MODES.step, actionLen: 2, maxTurns: 2 };
    const r = one([0.2, 0, 0.3, -0.3], 1, o);
    for (const t of [0, 1]) near(r.ratio[t]!, Math.exp(0.1));
    for (const t of [2, 3]) near(r.ratio[t]!, 1);
    for (const t of [0, 1]) near(r.dlogp[t]!, -Math.exp(0.1) / 4);
    for (const t of [2, 3]) near(r.dlogp[t]!, -1 / 4);
    // A step whose own s leaves the clip range is clipped alone: turn 0 at e^0.3 > 1.2 with A > 0.
    const c = one([0.3, 0.3, 0, 0], 1, o);
    expect(Array.from(c.clip)).toEqual([1, 1, 0, 0]);
    expect(Array.from(c.dlogp.subarray(0, 2))).toEqual([0, 0]);
  });
  it('GSPO: s = e^0.3 > 1.2 with A > 0 clips every row high, zero gradient', () => {
    const r = one([0.3, 0.3, 0.3], 1, { ...BASE, ratioMode: RATIO_MODES.sequence });
    for (let t = 0; t < 3; t++) {
      near(r.loss[t]!, -1.2 / 3);
      expect(r.dlogp[t]).toBe(0);
      expect(r.clip[t]).toBe(1);
    }
  });
  it('GSPO: A < 0 and s = e^-0.5 < 0.8 clips low; A < 0 and large s is not dual-clipped', () => {
    const lo = one([-0.5], -1, { ...BASE, ratioMode: RATIO_MODES.sequence });
    near(lo.loss[0]!, 0.8);
    expect(lo.clip[0]).toBe(-1);
    const hi = one([2], -1, { ...BASE, ratioMode: RATIO_MODES.sequence });
    near(hi.loss[0]!, Math.exp(2), 1e-5);
    near(hi.dlogp[0]!, Math.exp(2), 1e-5);
    expect(hi.clip[0]).toBe(0);
  });
  it('GSPO: log s is capped at 10 (verl), and the cap zeroes the gradient', () => {
    const r = one([15], -1, { ...BASE, ratioMode: RATIO_MODES.sequence });
    expect(r.ratio[0]).toBe(Math.fround(Math.exp(10)));
    expect(r.dlogp[0]).toBe(0);
  });

  it('GMPO: A > 0 caps a token at +eps in log space; the capped token gets no gradient', () => {
    const o = { ...BASE, clipLow: 0.4, clipHigh: 0.4, ratioMode: RATIO_MODES.geometric };
    const r = one([0.6, -0.1, 0.1], 1, o);
    const s = Math.exp(0.4 / 3);
    near(r.seqLog![0]!, 0.4 / 3);
    for (let t = 0; t < 3; t++) {
      near(r.ratio[t]!, s);
      near(r.loss[t]!, -s / 3);
    }
    expect(r.clip[0]).toBe(1);
    expect(r.dlogp[0]).toBe(0);
    near(r.dlogp[1]!, -s / 3);
    expect(r.clip[1]).toBe(0);
  });
  it('GMPO: A < 0 keeps the high side (pessimistic) and caps the low side', () => {
    const o = { ...BASE, clipLow: 0.4, clipHigh: 0.4, ratioMode: RATIO_MODES.geometric };
    const r = one([0.6, -0.6, 0.3], -1, o);
    const s = Math.exp((0.6 - 0.4 + 0.3) / 3);
    near(r.ratio[0]!, s);
    near(r.loss[0]!, s / 3);
    near(r.dlogp[0]!, s / 3);
    expect(r.clip[0]).toBe(0);
    expect(r.clip[1]).toBe(-1);
    expect(r.dlogp[1]).toBe(0);
  });

  it('SeeUPO: stage 1 (last turn) updates only turn-1 rows with M = A', () => {
    const o = { ...BASE, clipLow: 0.5, clipHigh: 0.5, ratioMode: RATIO_MODES.turn, actionLen: 2, maxTurns: 2, stage: 1 };
    const r = one([0.1, 0.3, 0.2, 0.4], 2, o, 0.5);
    const u0 = Math.exp(0.2);
    const u1 = Math.exp(0.3);
    for (const t of [0, 1]) {
      expect(r.loss[t]).toBe(0);
      expect(r.dlogp[t]).toBe(0);
      near(r.ratio[t]!, u0);
    }
    for (const t of [2, 3]) {
      near(r.ratio[t]!, u1);
      near(r.loss[t]!, 0.5 * -2 * u1);
      near(r.dlogp[t]!, 0.5 * -2 * u1);
    }
  });
  it('SeeUPO: stage 0 weighs turn 0 by the later turn ratio, M = A exp(seqLog[turn 1])', () => {
    const o = { ...BASE, clipLow: 0.5, clipHigh: 0.5, ratioMode: RATIO_MODES.turn, actionLen: 2, maxTurns: 2, stage: 0 };
    const r = one([0.1, 0.3, 0.2, 0.4], 2, o, 0.5);
    const M = 2 * Math.exp(0.3);
    near(r.loss[0]!, 0.5 * -M * Math.exp(0.2), 2e-6);
    near(r.dlogp[1]!, 0.5 * -M * Math.exp(0.2), 2e-6);
    expect(r.loss[2]).toBe(0);
    expect(r.dlogp[3]).toBe(0);
    // Clipped on turn 0's own ratio: u = e^0.2 inside [0.5, 1.5]; with eps 0.1 it clips high.
    const c = one([0.1, 0.3, 0.2, 0.4], 2, { ...o, clipLow: 0.1, clipHigh: 0.1 }, 0.5);
    near(c.loss[0]!, 0.5 * -M * 1.1, 2e-6);
    expect(c.clip[0]).toBe(1);
    expect(c.dlogp[0]).toBe(0);
    expect(c.clip[2]).toBe(0);
  });

  it('KL types: k1 = d (grad 1), k2 = d^2/2 (grad d), k3 = e^-d + d - 1 (grad 1 - e^-d)', () => {
    const run = (klType: number, mode = 0) =>
      ppoLossCpu(f32([-1]), f32([-1]), f32([-1.5]), f32([0]), f32([1]), { ...BASE, klCoef: 0.1, klType, ratioMode: mode, tp: 1 }, f32([0]));
    const d = 0.5;
    for (const mode of [0, 1, 2, 3]) {
      const k1 = run(KL_TYPES.k1, mode);
      near(k1.kl[0]!, d);
      near(k1.loss[0]!, 0.1 * d);
      near(k1.dlogp[0]!, 0.1);
      const k2 = run(KL_TYPES.k2, mode);
      near(k2.kl[0]!, d * d / 2);
      near(k2.dlogp[0]!, 0.1 * d);
      const k3 = run(KL_TYPES.k3, mode);
      near(k3.kl[0]!, Math.exp(-d) + d - 1);
      near(k3.dlogp[0]!, 0.1 * (1 - Math.exp(-d)));
    }
  });
  it('SeeUPO: the KL term applies only to the stage-k rows', () => {
    const r = ppoLossCpu(f32([0, 0]), f32([0, 0]), f32([-1, -1]), f32([0, 0]), f32([1, 1]),
      { ...BASE, klCoef: 0.1, klType: KL_TYPES.k1, ratioMode: RATIO_MODES.turn, tp: 2, actionLen: 1, maxTurns: 2, stage: 1 }, f32([0, 0]));
    expect(r.loss[0]).toBe(0);
    expect(r.dlogp[0]).toBe(0);
    near(r.loss[1]!, 0.1);
    near(r.dlogp[1]!, 0.1);
    near(r.kl[0]!, 1); // still reported
  });
});

// ---- finite differences --------------------------------------------------------------------------

interface Problem {
  B: number;
  tp: number;
  actionLen: number;
  T: number;
  mask: Float64Array;
  logp: Float64Array;
  logpOld: Float64Array;
  logpRef: Float64Array;
  adv: Float64Array;
}

/** B trajectories of Tp rows; trajectory n is masked in on its first len_n rows (1..Tp). */
function problem(seed: number, tokenAdv: boolean, spread = 0.15): Problem {
  const rng = createRng(seed);
  const [B, actionLen, T] = [5, 2, 3];
  const tp = actionLen * T;
  const R = B * tp;
  const mask = new Float64Array(R);
  const adv = new Float64Array(R);
  for (let n = 0; n < B; n++) {
    const len = n === 0 ? tp : 1 + Math.floor(rng.next() * tp);
    const a = rng.normal();
    for (let j = 0; j < tp; j++) {
      const m = j < len ? 1 : 0;
      mask[n * tp + j] = m;
      adv[n * tp + j] = m * (tokenAdv ? rng.normal() : a);
    }
  }
  const logpOld = Float64Array.from({ length: R }, () => -0.5 - Math.abs(rng.normal()));
  const logp = Float64Array.from(logpOld, (x) => x + rng.normal() * spread);
  const logpRef = Float64Array.from(logpOld, (x) => x + rng.normal() * 0.3);
  return { B, tp, actionLen, T, mask, logp, logpOld, logpRef, adv };
}

/** Seq-mean-token-mean weights 1/(B |o_n|); in mode 3 the stage-k rows get 1/(B |turn-k rows of n|). */
function weights(p: Problem, mode: number, stage: number): Float64Array {
  const w = new Float64Array(p.mask.length);
  for (let n = 0; n < p.B; n++) {
    let len = 0;
    let lenK = 0;
    for (let j = 0; j < p.tp; j++) {
      len += p.mask[n * p.tp + j]!;
      if (Math.floor(j / p.actionLen) === stage) lenK += p.mask[n * p.tp + j]!;
    }
    for (let j = 0; j < p.tp; j++) {
      const i = n * p.tp + j;
      const inK = mode === RATIO_MODES.turn && Math.floor(j / p.actionLen) === stage;
      w[i] = p.mask[i]! === 0 ? 0 : inK ? 1 / (p.B * lenK) : 1 / (p.B * len);
    }
  }
  return w;
}

/**
 * Loss rows with seqLog recomputed from logp, over rows rowBase.. of the problem. In mode 3 the later
 * turns' entries are held at `frozen` (stop-gradient: they are the already-updated turns' ratios).
 */
function lossRows(p: Problem, logp: Float64Array, o: PpoLossOptions, w: Float64Array, rowBase: number, rows: number, frozen?: Float64Array) {
  const mode = o.ratioMode ?? 0;
  const sl = (a: Float64Array) => a.subarray(rowBase, rowBase + rows);
  let seqLog: Float64Array | undefined;
  if (mode !== 0) {
    seqLog = new Float64Array(p.B * (mode === RATIO_MODES.turn || mode === RATIO_MODES.step ? p.T : 1));
    seqRatioCpu(sl(p.mask), sl(logp), sl(p.logpOld), sl(p.adv), { mode: SEQ_MODE[mode]!, tp: p.tp, actionLen: p.actionLen, maxTurns: p.T, clipLow: o.clipLow, clipHigh: o.clipHigh, rowBase }, seqLog);
    if (mode === RATIO_MODES.turn && frozen) {
      for (let n = 0; n < p.B; n++) for (let t = (o.stage ?? 0) + 1; t < p.T; t++) seqLog[n * p.T + t] = frozen[n * p.T + t]!;
    }
  }
  const out = ppoLossCpu64(sl(logp), sl(p.logpOld), sl(p.logpRef), sl(p.adv), sl(w), { tp: p.tp, actionLen: p.actionLen, maxTurns: p.T, rowBase, ...o }, seqLog);
  return { ...out, seqLog };
}

/** Checks dlogp against central differences of J = sum of loss rows; returns [checked, max |err|]. */
function fdCheck(p: Problem, o: PpoLossOptions, rowBase = 0, rows = p.logp.length - rowBase): [number, number] {
  const mode = o.ratioMode ?? 0;
  const w = weights(p, mode, o.stage ?? 0);
  const base = lossRows(p, p.logp, o, w, rowBase, rows);
  const frozen = base.seqLog;
  const J = (lp: Float64Array) => {
    const r = lossRows(p, lp, o, w, rowBase, rows, frozen);
    return { J: r.loss.reduce((s, x) => s + x, 0), clip: r.clip };
  };
  const h = 1e-6;
  let checked = 0;
  let worst = 0;
  for (let r = 0; r < rows; r++) {
    const i = rowBase + r;
    const up = Float64Array.from(p.logp);
    const dn = Float64Array.from(p.logp);
    up[i] = up[i]! + h;
    dn[i] = dn[i]! - h;
    const a = J(up);
    const b = J(dn);
    const kink = a.clip.some((c, q) => c !== base.clip[q]) || b.clip.some((c, q) => c !== base.clip[q]);
    if (kink) continue;
    const fd = (a.J - b.J) / (2 * h);
    const err = Math.abs(fd - base.dlogp[r]!);
    worst = Math.max(worst, err);
    expect(err, `row ${i}: dlogp ${base.dlogp[r]} vs finite difference ${fd}`).toBeLessThanOrEqual(1e-8 + 1e-6 * Math.abs(fd));
    checked++;
  }
  return [checked, worst];
}

describe('dlogp matches finite differences of the aggregated loss (f64)', () => {
  const KLS = [KL_TYPES.k3, KL_TYPES.k1, KL_TYPES.k2];
  const cases: Array<[string, number, PpoLossOptions, number]> = [
    // name, mode, options, spread of the log-ratios
    ['token', RATIO_MODES.token, { clipLow: 0.2, clipHigh: 0.28, dualClip: 1.15, klCoef: 0.1 }, 0.15],
    ['sequence (GSPO)', RATIO_MODES.sequence, { clipLow: 0.05, clipHigh: 0.06, dualClip: 3, klCoef: 0.1, ratioMode: 1 }, 0.15],
    ['geometric (GMPO)', RATIO_MODES.geometric, { clipLow: 0.1, clipHigh: 0.12, dualClip: 3, klCoef: 0.1, ratioMode: 2 }, 0.15],
    ['turn stage 0 (SeeUPO)', RATIO_MODES.turn, { clipLow: 0.05, clipHigh: 0.05, dualClip: 3, klCoef: 0.1, ratioMode: 3, stage: 0 }, 0.15],
    ['turn stage 2 (SeeUPO)', RATIO_MODES.turn, { clipLow: 0.05, clipHigh: 0.05, dualClip: 3, klCoef: 0.1, ratioMode: 3, stage: 2 }, 0.15],
    ['step (SAMPO)', RATIO_MODES.step, { clipLow: 0.05, clipHigh: 0.06, dualClip: 3, klCoef: 0.1, ratioMode: 4 }, 0.15],
    ['sft (ReGFT)', RATIO_MODES.sft, { clipLow: 0.2, clipHigh: 0.2, dualClip: 3, klCoef: 0.1, ratioMode: 5 }, 0.15],
    ['sapo', RATIO_MODES.sapo, { clipLow: 1, clipHigh: 1.05, dualClip: 3, klCoef: 0.1, ratioMode: 7 }, 0.15],
  ];
  for (const [name, mode, o, spread] of cases) {
    for (const klType of KLS) {
      it(`${name}, kl ${Object.keys(KL_TYPES)[klType]}`, () => {
        let total = 0;
        let rows = 0;
        let worst = 0;
        for (const seed of [1, 2, 3]) {
          const p = problem(seed * 10 + mode, mode === 0, spread);
          const [c, e] = fdCheck(p, { ...o, klType });
          total += c;
          rows += p.logp.length;
          worst = Math.max(worst, e);
        }
        console.info(`[fd] ${name} kl ${klType}: ${total}/${rows} rows checked, max |err| ${worst.toExponential(2)}`);
        expect(total).toBeGreaterThan(0.75 * rows);
      });
    }
  }
  it('a minibatch (rowBase = 2 trajectories) indexes seqLog by absolute trajectory', () => {
    for (const [, , o] of cases.slice(1)) {
      const p = problem(77, false);
      const [c] = fdCheck(p, { ...o, klType: KL_TYPES.k2 }, 2 * p.tp, 2 * p.tp);
      expect(c).toBeGreaterThan(p.tp);
    }
  });
  it('the branches are exercised: clipped and unclipped rows in every mode', () => {
    for (const [name, mode, o] of cases) {
      const active: number[] = [];
      for (const seed of [1, 2, 3]) {
        const p = problem(seed * 10 + mode, mode === 0);
        const r = lossRows(p, p.logp, o, weights(p, mode, o.stage ?? 0), 0, p.logp.length);
        r.clip.forEach((c, i) => {
          if (p.mask[i] !== 0 && (mode !== 3 || Math.floor((i % p.tp) / p.actionLen) === o.stage)) active.push(c);
        });
      }
      // Cross-entropy has no clip at all.
      if (mode === RATIO_MODES.sft || mode === RATIO_MODES.sapo) expect(active.every((c) => c === 0), `${name} clips nothing`).toBe(true);
      else expect(active.some((c) => c !== 0), `${name} clips some rows`).toBe(true);
      expect(active.some((c) => c === 0), `${name} leaves some rows unclipped`).toBe(true);
    }
  });
});

// ---- defining behaviours -------------------------------------------------------------------------

describe('what each mode is for', () => {
  const outlier = [0, 0, 3, 0, 0, 0];
  it('one outlier token (+3 in 6): its token ratio is e^3 (clipped); GSPO moves every row by exp(3/6)', () => {
    const tok = one(outlier, 1, { ...BASE, clipHigh: 0.28 });
    near(tok.ratio[2]!, Math.exp(3), 1e-5);
    expect(tok.clip[2]).toBe(1);
    expect(tok.dlogp[2]).toBe(0);
    near(tok.ratio[0]!, 1);
    const gspo = one(outlier, 1, { ...BASE, clipLow: 0.5, clipHigh: 1, ratioMode: RATIO_MODES.sequence });
    for (let t = 0; t < 6; t++) near(gspo.ratio[t]!, Math.exp(3 / 6));
  });
  it('GMPO: one token moves log s by at most clipHigh / |o| (A > 0)', () => {
    for (const jump of [0.1, 0.4, 3, 1e4]) {
      const g = one([0, 0, jump, 0, 0, 0], 1, { ...BASE, clipLow: 0.4, clipHigh: 0.4, ratioMode: RATIO_MODES.geometric });
      expect(g.seqLog![0]).toBeLessThanOrEqual(Math.fround(0.4) / 6 + 1e-7);
      near(g.ratio[0]!, Math.exp(Math.min(jump, 0.4) / 6));
    }
  });
  it('SeeUPO stage k: zero gradient and zero loss on every other turn', () => {
    const p = problem(5, false, 0.3);
    for (let stage = 0; stage < p.T; stage++) {
      const o = { ...BASE, klCoef: 0.1, ratioMode: RATIO_MODES.turn, stage };
      const r = lossRows(p, p.logp, o, weights(p, RATIO_MODES.turn, stage), 0, p.logp.length);
      r.dlogp.forEach((g, i) => {
        if (Math.floor((i % p.tp) / p.actionLen) !== stage) {
          expect(g).toBe(0);
          expect(r.loss[i]).toBe(0);
          expect(r.clip[i]).toBe(0);
        }
      });
      expect(r.dlogp.some((g, i) => g !== 0 && Math.floor((i % p.tp) / p.actionLen) === stage)).toBe(true);
    }
  });
});

describe('extremes stay finite', () => {
  const tp = 6;
  const lens = [0, 1, tp]; // empty mask, one token, full length
  for (const mode of [0, 1, 2, 3]) {
    for (const klType of [0, 1, 2]) {
      it(`mode ${mode}, kl ${klType}: log-ratios +-1e4, A +-1e4, lengths 0, 1, ${tp}`, () => {
        for (const lr of [1e4, -1e4, 50, -50]) {
          for (const A of [1e4, -1e4, 0]) {
            const N = lens.length;
            const mask = new Float32Array(N * tp);
            lens.forEach((len, n) => mask.fill(1, n * tp, n * tp + len));
            const logp = Float32Array.from(mask, (_, i) => (i % 2 ? lr : -lr / 3));
            const old = new Float32Array(N * tp);
            const ref = Float32Array.from(logp, (x) => -x);
            const adv = Float32Array.from(mask, (m) => m * A);
            const w = Float32Array.from(mask, (m, i) => m / Math.max(1, lens[Math.floor(i / tp)]!));
            const o = { ...BASE, klCoef: 0.1, klType, ratioMode: mode, tp, actionLen: 2, maxTurns: 3, stage: 1 };
            const seqLog = mode === 0 ? undefined : seqRatioCpu(mask, logp, old, adv, { mode: SEQ_MODE[mode]!, tp, actionLen: 2, maxTurns: 3, clipLow: 0.4, clipHigh: 0.4 });
            if (seqLog) {
              expect(seqLog.every((x) => Number.isFinite(x) && Math.abs(x) <= 20)).toBe(true);
              // the empty trajectory's segments are 0
              expect(seqLog[0]).toBe(0);
            }
            const r = ppoLossCpu(logp, old, ref, adv, w, o, seqLog);
            for (const a of [r.loss, r.dlogp, r.ratio, r.kl]) expect(a.every(Number.isFinite)).toBe(true);
            // masked rows (weight 0) contribute nothing
            mask.forEach((m, i) => {
              if (m === 0) {
                expect(Math.abs(r.loss[i]!)).toBe(0);
                expect(r.clip[i]).toBe(0);
              }
            });
          }
        }
      });
    }
  }
});
