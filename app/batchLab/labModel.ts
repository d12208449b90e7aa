/**
 * Batch lab, the plain part: method sets (defaults, names, validation against the run's config),
 * the groups of a re-scored batch, per-column summaries and the diverging colour scale. No React,
 * no training math: the numbers come from the worker's `rescore` (workers/core/batchLab.ts).
 */
import { ConfigError, ESTIMATOR_IDS, methodRegistry, withMethods, type RunConfig } from '../../workers/meta';
import type { LabColumn, LabResult } from '../../workers/core/batchLab';

export const MIN_SETS = 1;
export const MAX_SETS = 4;

export type Quantity = 'adv' | 'weight' | 'grad';

export const QUANTITIES: Array<{ id: Quantity; label: string; short: string; doc: string }> = [
  { id: 'adv', label: 'advantage', short: 'A', doc: 'The per-token advantage. Blue (positive): the update raises the token’s probability; red: lowers it; grey dashed: exactly 0.' },
  {
    id: 'weight',
    label: 'aggregation weight',
    short: 'w',
    doc: 'The share of the loss each token carries under the set’s loss aggregation; grey dashed: 0 (filtered out).',
  },
  {
    id: 'grad',
    label: 'gradient weight',
    short: '∂L/∂logp',
    doc: 'd(loss)/d(logp) at the current policy: what each token pushes on its own log-prob. Blue (negative): raised; red (positive): lowered; grey: no gradient at all.',
  },
];

/** Which sign is drawn blue ("pushed up"): a negative d(loss)/d(logp) raises the token. */
export const UP_SIGN: Record<Quantity, 1 | -1> = { adv: 1, weight: 1, grad: -1 };

const METHODS = methodRegistry;

export function methodName(id: string): string {
  return METHODS[id]?.name ?? id;
}

/** "GRPO + DAPO". */
export function setLabel(ids: readonly string[]): string {
  return ids.length ? ids.map(methodName).join(' + ') : '(no methods)';
}

export function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((m) => b.includes(m));
}

/** The run's own set, plus GRPO when the run uses something else. */
export function defaultSets(runMethods: readonly string[]): string[][] {
  const own = [...runMethods];
  return sameSet(own, ['grpo']) ? [own] : [own, ['grpo']];
}

/** Sets the "Add a set" menu offers: each advantage estimator alone, and the run's own set. */
export function presetSets(runMethods: readonly string[]): Array<{ key: string; label: string; methods: string[] }> {
  const out = ESTIMATOR_IDS.map((id) => ({ key: id, label: methodName(id), methods: [id] }));
  out.unshift({ key: 'run', label: `The run’s set (${setLabel(runMethods)})`, methods: [...runMethods] });
  return out;
}

/** The ConfigError message ("methods: dapo conflicts with drgrpo; ...") for a refused set, else null. */
export function setProblem(config: RunConfig, ids: string[]): string | null {
  try {
    withMethods(config, ids);
    return null;
  } catch (e) {
    if (e instanceof ConfigError) return e.message;
    return e instanceof Error ? e.message : String(e);
  }
}

export interface LabGroup {
  index: number;
  /** Trajectory ids (rows of the batch), in batch order. */
  members: number[];
  rewards: number[];
  allEqual: boolean;
}

export function labGroups(r: Pick<LabResult, 'N' | 'group' | 'reward'>): LabGroup[] {
  const out: LabGroup[] = [];
  for (let n = 0; n < r.N; n++) {
    const g = r.group[n]!;
    (out[g] ??= { index: g, members: [], rewards: [], allEqual: true }).members.push(n);
    out[g]!.rewards.push(r.reward[n]!);
  }
  for (const g of out) g.allEqual = g.rewards.every((x) => x === g.rewards[0]);
  return out.filter(Boolean);
}

/** The first group whose rewards are all equal (Advantage Collapse under GRPO), else the first. */
export function defaultGroup(groups: LabGroup[]): number {
  return (groups.find((g) => g.allEqual) ?? groups[0])?.index ?? 0;
}

export function formatValue(v: number, digits = 3): string {
  if (!Number.isFinite(v)) return String(v);
  if (v === 0) return '0';
  return Math.abs(v) < 10 ** -digits ? v.toExponential(2) : v.toFixed(digits);
}

export function signed(v: number, digits = 3): string {
  const s = formatValue(v, digits);
  return v > 0 ? `+${s}` : s;
}

/** [N * Tp] the values a column shows: its own, or its difference from the first column. */
export function columnValues(col: LabColumn, q: Quantity, first: LabColumn | null): Float32Array {
  const v = col[q];
  if (!first) return v;
  const base = first[q];
  return v.map((x, i) => x - base[i]!);
}

export interface ColumnSummary {
  tokens: number;
  zeroGrad: number;
  sumAbsGrad: number;
}

/** Over the policy tokens of `rows` (trajectory ids) or of the whole batch. */
export function summarize(r: LabResult, col: LabColumn, rows?: number[]): ColumnSummary {
  const s: ColumnSummary = { tokens: 0, zeroGrad: 0, sumAbsGrad: 0 };
  for (const n of rows ?? [...Array(r.N).keys()]) {
    for (let j = 0; j < r.Tp; j++) {
      const i = n * r.Tp + j;
      if (!r.mask[i]) continue;
      s.tokens++;
      const g = col.grad[i]!;
      if (g === 0) s.zeroGrad++;
      s.sumAbsGrad += Math.abs(g);
    }
  }
  return s;
}

export function percent(part: number, whole: number): string {
  return whole ? `${Math.round((100 * part) / whole)}%` : '–';
}

/** Policy-token positions of trajectory n, by turn: [turn][{ i, j }], empty turns left out. */
export function turnsOf(r: LabResult, n: number): Array<{ turn: number; rows: number[] }> {
  const out: Array<{ turn: number; rows: number[] }> = [];
  for (let k = 0; k < r.maxTurns; k++) {
    const rows: number[] = [];
    for (let a = 0; a < r.actionLen; a++) {
      const j = k * r.actionLen + a;
      if (j < r.Tp && r.mask[n * r.Tp + j]) rows.push(n * r.Tp + j);
    }
    if (rows.length) out.push({ turn: k, rows });
  }
  return out;
}

/**
 * A token's background on a diverging scale shared by every column: blue for the "up" sign, red
 * for the other, alpha by |v| / scale. Exact zeros get no colour (drawn dashed and grey by CSS).
 */
export function tokenStyle(v: number, scale: number, up: 1 | -1): { background?: string; color?: string } {
  if (v === 0 || !Number.isFinite(v) || scale <= 0) return {};
  const t = Math.min(1, Math.abs(v) / scale);
  const a = 0.12 + 0.78 * Math.sqrt(t);
  const rgb = Math.sign(v) === up ? '37, 99, 235' : '220, 38, 38';
  return { background: `rgba(${rgb}, ${a.toFixed(3)})`, ...(a > 0.6 ? { color: '#ffffff' } : {}) };
}
