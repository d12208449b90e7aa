/**
 * The batch as the explainer reads it: the dump plus what follows from it alone (each row's group
 * as the advantage saw it, turns taken, the minibatches), and the small numeric helpers every
 * derivation shares. Only type imports from the engine: this module runs on the page.
 *
 * Precision: the trainer keeps some intermediates in float32 arrays (per-trajectory statistics,
 * segment log-ratios, the advantage before whitening, the aggregation weights). The explainer
 * computes in float64 and rounds to float32 exactly where the trainer stores one, so that its
 * value and the trainer's agree to the last bits, not only roughly.
 */
import type { BatchDump, DumpLayout, DumpPlan } from '../formats/batchDump';

export type Traj = BatchDump['trajs'][number];
export type Token = Traj['tokens'][number];

export const f32 = Math.fround;
export const clamp = (x: number, lo: number, hi: number) => Math.min(Math.max(x, lo), hi);

/**
 * Whether two values agree to float32 rounding: within a few float32 ulps of the larger of the
 * values and `scale` (the size of the inputs a difference was taken of; a value that is the small
 * difference of large inputs carries their rounding). `tol` is in units of 2^-24.
 */
export function agrees(a: number, b: number, scale = 0, tol = 64): boolean {
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b);
  if (!Number.isFinite(a) || !Number.isFinite(b)) return a === b;
  const s = Math.max(Math.abs(a), Math.abs(b), Math.abs(scale), 1e-30);
  return Math.abs(a - b) <= tol * 2 ** -24 * s;
}

/** Shortest readable form of a number for the derivations (6 significant digits). */
export function num(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '∞' : '−∞';
  if (x === 0) return '0';
  if (Number.isInteger(x) && Math.abs(x) < 1e6) return String(x).replace('-', '−');
  const a = Math.abs(x);
  const s = a >= 1e-3 && a < 1e6 ? String(Number(x.toPrecision(6))) : x.toExponential(3).replace(/\.?0+e/, 'e');
  return s.replace('-', '−').replace('e+', 'e');
}

/** `(a)` when a is negative, so that substituted formulas read right: 1 − (−0.5). */
export function par(x: number): string {
  return x < 0 ? `(${num(x)})` : num(x);
}

export interface ExplainBatch {
  dump: BatchDump;
  plan: DumpPlan;
  layout: DumpLayout;
  N: number;
  /** The advantage's group of trajectory n: its members in order (a DARS slot left unused is a group of its own). */
  members(n: number): number[];
  /** Turns trajectory n took: 1 + its last policy token's turn (0 without policy tokens, as for rows not trained on). */
  turnsOf(n: number): number;
  /** The trajectories of each minibatch, [first, end). */
  minibatches: Array<[number, number]>;
  /** ReGFT's fine-tuning iteration: advantage R, token cross-entropy. */
  sft: boolean;
  /** Lazily computed values shared by many explanations (batch-wide statistics). */
  cache: Map<string, unknown>;
  /**
   * A batch lab set (types.ts LabDump): its aggregation and gradient weights per token, which the
   * explainer checks; SeeUPO's rows each at their own turn's stage, as the lab computes them.
   */
  lab: { weight: number[][]; grad: number[][]; notes: string[] } | null;
}

/** Why a dump cannot be explained at all, or null. */
export function unexplainable(d: BatchDump): string | null {
  if (!d.plan || !d.layout) return 'this batch dump predates the fields the explainer reads (plan, layout): export it from a current build';
  return null;
}

export function explainBatch(dump: BatchDump, lab: ExplainBatch['lab'] = null): ExplainBatch {
  const why = unexplainable(dump);
  if (why) throw new Error(why);
  const N = dump.trajs.length;
  const turns = dump.trajs.map((t) => (t.tokens.length ? Math.max(...t.tokens.map((k) => k.turn)) + 1 : 0));
  // Groups are runs of rows with the same ordinal; a DARS slot its prompt left unused is the dump's
  // member of the prompt's group, but the advantage saw it as a group of one.
  const byGroup = new Map<number, number[]>();
  dump.trajs.forEach((t, n) => {
    if (t.origin === 'unused') return;
    const list = byGroup.get(t.group) ?? [];
    list.push(n);
    byGroup.set(t.group, list);
  });
  const mb: Array<[number, number]> = [];
  dump.trajs.forEach((t, n) => {
    const m = t.minibatch ?? 0;
    if (!mb[m]) mb[m] = [n, n + 1];
    else mb[m]![1] = n + 1;
  });
  const minibatches = mb.filter((x): x is [number, number] => x !== undefined);
  const hinted = dump.plan!.hintedSft;
  return {
    dump,
    plan: dump.plan!,
    layout: dump.layout!,
    N,
    members: (n) => (dump.trajs[n]!.origin === 'unused' ? [n] : byGroup.get(dump.trajs[n]!.group)!),
    turnsOf: (n) => turns[n]!,
    minibatches: minibatches.length ? minibatches : [[0, N]],
    sft: hinted !== null && dump.iter <= hinted.iters,
    cache: new Map(),
    lab,
  };
}

/** Memoizes a batch-wide value under `key`. */
export function cached<T>(b: ExplainBatch, key: string, make: () => T): T {
  if (!b.cache.has(key)) b.cache.set(key, make());
  return b.cache.get(key) as T;
}

/** The minibatch of trajectory n. */
export function minibatchOf(b: ExplainBatch, n: number): [number, number] {
  return b.minibatches.find(([a, e]) => n >= a && n < e) ?? [0, b.N];
}

/** Mean taken around the first value, r0 + sum(r - r0) / c, as the trainer does (equal values give exactly 0 deviations). */
export function pivotMean(xs: readonly number[]): number {
  if (xs.length === 0) return 0;
  const r0 = xs[0]!;
  let s = 0;
  for (const x of xs) s += x - r0;
  return r0 + s / xs.length;
}

export function stdAround(xs: readonly number[], mean: number, unbiased: boolean): number {
  let ss = 0;
  for (const x of xs) ss += (x - mean) ** 2;
  return Math.sqrt(ss / (unbiased ? xs.length - 1 : xs.length));
}

/** Per trajectory: masked token count, mean old-policy entropy, log IS weight, score-norm proxy (float32, as trajStats stores them). */
export interface TrajStats {
  len: number;
  entMean: number;
  logIS: number;
  g2proxy: number;
}

export function trajStats(b: ExplainBatch, n: number): TrajStats {
  return cached(b, `trajStats:${n}`, () => {
    let len = 0;
    let ent = 0;
    let lis = 0;
    let g2 = 0;
    for (const k of b.dump.trajs[n]!.tokens) {
      len += 1;
      ent += k.entropy_old ?? NaN;
      lis += clamp((k.logp_old) - (k.logp_rollout ?? k.logp_old), -20, 20);
      g2 += Math.max(1 - 2 * Math.exp(k.logp_old) + (k.sum_p2_old ?? NaN), 0);
    }
    return { len: f32(len), entMean: f32(len > 0 ? ent / len : 0), logIS: f32(lis), g2proxy: f32(g2) };
  });
}
