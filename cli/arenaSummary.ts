/**
 * The arena's numbers per cell (cli/arena.ts, docs/ARENA.md "The table"): from each (cell, seed) run's
 * per-iteration success and diagnosis, the means over seeds with 95 % Student's t intervals, crashes,
 * and cost; the difference to the first cell paired by seed.
 */
import type { Crash } from '../workers/content/arena/crash';
import { pairedDiff, t975, type PairedDiff } from './pairedStats';

export interface ArenaRun {
  cell: string;
  seed: number;
  /** success_rate per iteration (shorter than the spec's iters when the update went non-finite). */
  success: number[];
  /** neg_out_grad_share per iteration. */
  negOut: number[];
  /** Mean trajectories rolled out per iteration. */
  rollouts: number;
  seconds: number;
  crash: Crash;
}

export interface Interval {
  mean: number;
  lo: number;
  hi: number;
}

export interface ArenaCellSummary {
  cell: string;
  label: string;
  seeds: number;
  /** Mean success over the last quarter of the iterations. */
  final: Interval;
  /** Mean success over the first quarter. */
  early: Interval;
  /** Final success minus the first cell's, paired by seed (null for the first cell or one seed). */
  vsFirst: PairedDiff | null;
  crashes: number;
  /** Median crash iteration of the crashed seeds. */
  crashAt: number | null;
  /** Mean over seeds of each run's largest neg_out_grad_share. */
  peakNegOut: number;
  rolloutsPerIter: number;
  wallSeconds: number;
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(xs.length, 1);

/** The mean of the values and its 95 % t interval (the mean itself as both ends for one value). */
export function meanInterval(xs: readonly number[]): Interval {
  const m = mean(xs);
  if (xs.length < 2) return { mean: m, lo: m, hi: m };
  const sd = Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
  const half = t975(xs.length - 1) * (sd / Math.sqrt(xs.length));
  return { mean: m, lo: m - half, hi: m + half };
}

/** The mean over the first or last quarter of a run of `iters` iterations (at least one). */
export function quarterMean(series: readonly number[], iters: number, which: 'first' | 'last'): number {
  const q = Math.max(1, Math.floor(iters / 4));
  // A run stopped early by a non-finite update counts its missing iterations as 0 success.
  const full = Array.from({ length: iters }, (_, i) => series[i] ?? 0);
  return mean(which === 'first' ? full.slice(0, q) : full.slice(iters - q));
}

export function summarizeArena(cells: ReadonlyArray<{ id: string; label: string }>, runs: readonly ArenaRun[], seeds: readonly number[], iters: number): ArenaCellSummary[] {
  const bySeed = (cell: string) => seeds.map((s) => {
    const r = runs.find((x) => x.cell === cell && x.seed === s);
    if (!r) throw new Error(`arena: no result for cell ${cell} seed ${s}`);
    return r;
  });
  const finals = (cell: string) => bySeed(cell).map((r) => quarterMean(r.success, iters, 'last'));
  return cells.map((c, i) => {
    const rs = bySeed(c.id);
    const crashed = rs.filter((r) => r.crash.crashed).map((r) => r.crash.at!).sort((a, b) => a - b);
    const mid = crashed.length;
    return {
      cell: c.id,
      label: c.label,
      seeds: rs.length,
      final: meanInterval(finals(c.id)),
      early: meanInterval(rs.map((r) => quarterMean(r.success, iters, 'first'))),
      vsFirst: i > 0 && seeds.length >= 2 ? pairedDiff(finals(cells[0]!.id), finals(c.id)) : null,
      crashes: crashed.length,
      crashAt: mid ? (mid % 2 ? crashed[(mid - 1) / 2]! : (crashed[mid / 2 - 1]! + crashed[mid / 2]!) / 2) : null,
      peakNegOut: mean(rs.map((r) => Math.max(0, ...r.negOut))),
      rolloutsPerIter: mean(rs.map((r) => r.rollouts)),
      wallSeconds: mean(rs.map((r) => r.seconds)),
    };
  });
}

const f = (x: number, d = 3) => x.toFixed(d);
const iv = (x: Interval) => `${f(x.mean)} [${f(x.lo)}, ${f(x.hi)}]`;

export function arenaMarkdown(rows: readonly ArenaCellSummary[], skipped: ReadonlyArray<{ label: string; why: string }>): string {
  const first = rows[0]?.label ?? '';
  const lines = [
    `| cell | final success [95 % CI] | early success [95 % CI] | final − first cell [95 % CI] | crashes | median crash iter | peak neg_out_grad_share | rollouts / iter | wall s / run |`,
    '|---|---|---|---|---|---|---|---|---|',
    ...rows.map((r) =>
      `| ${r.label} | ${iv(r.final)} | ${iv(r.early)} | ${r.vsFirst ? `${f(r.vsFirst.mean)} [${f(r.vsFirst.lo)}, ${f(r.vsFirst.hi)}]` : '—'} | ${r.crashes} / ${r.seeds} | ${r.crashAt ?? '—'} | ${f(r.peakNegOut)} | ${f(r.rolloutsPerIter, 1)} | ${f(r.wallSeconds, 1)} |`,
    ),
  ];
  if (rows.length > 1) lines.push('', `The first cell, the one the differences are to: ${first}.`);
  if (skipped.length) lines.push('', 'Skipped:', ...skipped.map((s) => `- ${s.label}: ${s.why}`));
  return lines.join('\n');
}

export function arenaJsonLines(rows: readonly ArenaCellSummary[], skipped: ReadonlyArray<{ label: string; why: string }>): string {
  return [...rows.map((r) => JSON.stringify(r)), ...skipped.map((s) => JSON.stringify({ skipped: s.label, why: s.why }))].join('\n');
}
