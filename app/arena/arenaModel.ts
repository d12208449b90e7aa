/**
 * The Arena's numbers, DOM-free: each (cell, seed) run is kept as a compact trace (the scalars the
 * grid shows, per iteration), and a cell's summary is computed from its seeds' traces. The band is
 * the min and max over the seeds at each iteration (with 2 to 8 seeds, a std band would claim a
 * shape the data cannot show); the line is their mean.
 */
import type { Crash } from '../../workers/content/arena/crash';

/** One (cell, seed) run as the grid needs it. */
export interface SeedTrace {
  seed: number;
  iters: number[];
  success: number[];
  /** ARLArena's diagnosis per iteration (NaN where the run does not report it). */
  diag: number[];
  rollouts: number[];
  ms: number[];
  crash: Crash;
  /** Ran all its iterations. */
  done: boolean;
  /** The run's error (a refused config, a dead worker), or null. */
  error: string | null;
}

/** Mean and band over the seeds at each iteration that at least one seed has reached. */
export interface Band {
  iters: number[];
  mean: number[];
  lo: number[];
  hi: number[];
}

export interface CellSummary {
  cellId: string;
  seeds: number;
  /** Seeds whose run finished. */
  done: number;
  /** Seeds whose run has begun (an iteration in, finished, or failed). */
  started: number;
  /** Seeds finished from the first on, up to the first that is not (what a link can run again). */
  doneInOrder: number;
  success: Band;
  diag: Band;
  /** The highest mean diagnosis over the iterations, or null when no seed reports one. */
  diagPeak: number | null;
  /** Mean over seeds of each seed's mean success over its last FINAL_WINDOW iterations; null before any. */
  finalSuccess: number | null;
  crashed: number;
  /** Iterations the crashed seeds crashed at, ascending. */
  crashAt: number[];
  /** The first crashed seed's reason. */
  crashWhy: string | null;
  /** Rollouts per iteration, mean over every iteration of every seed. */
  rolloutsPerIter: number | null;
  /** Wall time per seed in seconds, mean over the seeds that ran. */
  wallSeconds: number | null;
  errors: string[];
}

/** Final success reads the last 5 iterations of each seed: one iteration's success is a noisy sample. */
export const FINAL_WINDOW = 5;

export function emptyTrace(seed: number): SeedTrace {
  return { seed, iters: [], success: [], diag: [], rollouts: [], ms: [], crash: { crashed: false, at: null, why: null }, done: false, error: null };
}

function mean(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

/** Mean, min and max over the traces' finite values at each iteration any of them reached. */
export function bandOf(traces: readonly SeedTrace[], pick: (t: SeedTrace) => readonly number[]): Band {
  const byIter = new Map<number, number[]>();
  for (const t of traces) {
    const ys = pick(t);
    t.iters.forEach((it, i) => {
      const y = ys[i];
      if (y === undefined || !Number.isFinite(y)) return;
      const list = byIter.get(it);
      if (list) list.push(y);
      else byIter.set(it, [y]);
    });
  }
  const iters = [...byIter.keys()].sort((a, b) => a - b);
  const band: Band = { iters, mean: [], lo: [], hi: [] };
  for (const it of iters) {
    const ys = byIter.get(it)!;
    band.mean.push(mean(ys));
    band.lo.push(Math.min(...ys));
    band.hi.push(Math.max(...ys));
  }
  return band;
}

/** A seed's success over its last FINAL_WINDOW iterations (finite values only), or null. */
export function finalSuccessOf(t: SeedTrace): number | null {
  const tail = t.success.slice(-FINAL_WINDOW).filter(Number.isFinite);
  return tail.length > 0 ? mean(tail) : null;
}

export function summarize(cellId: string, traces: readonly SeedTrace[]): CellSummary {
  const success = bandOf(traces, (t) => t.success);
  const diag = bandOf(traces, (t) => t.diag);
  const finals = traces.map(finalSuccessOf).filter((x): x is number => x !== null);
  const crashedTraces = traces.filter((t) => t.crash.crashed);
  const rollouts = traces.flatMap((t) => t.rollouts).filter(Number.isFinite);
  const walls = traces.filter((t) => t.ms.length > 0).map((t) => t.ms.reduce((a, b) => a + (Number.isFinite(b) ? b : 0), 0) / 1000);
  return {
    cellId,
    seeds: traces.length,
    done: traces.filter((t) => t.done).length,
    started: traces.filter((t) => t.done || t.error !== null || t.iters.length > 0).length,
    doneInOrder: ((i) => (i < 0 ? traces.length : i))(traces.findIndex((t) => !t.done)),
    success,
    diag,
    diagPeak: diag.mean.length > 0 ? Math.max(...diag.mean) : null,
    finalSuccess: finals.length > 0 ? mean(finals) : null,
    crashed: crashedTraces.length,
    crashAt: crashedTraces.map((t) => t.crash.at).filter((x): x is number => x !== null).sort((a, b) => a - b),
    crashWhy: crashedTraces[0]?.crash.why ?? null,
    rolloutsPerIter: rollouts.length > 0 ? mean(rollouts) : null,
    wallSeconds: walls.length > 0 ? mean(walls) : null,
    errors: traces.map((t) => t.error).filter((e): e is string => e !== null),
  };
}

const seedsWord = (n: number) => `${n} seed${n === 1 ? '' : 's'}`;

/**
 * "crashed on 2 of 4 seeds, at iterations 31, 40"; without a crash, only about the seeds that ran
 * to the end: "no crash on 4 seeds", "no crash on the 1 seed done", "no crash so far".
 */
export function crashText(s: CellSummary): string {
  if (s.started === 0) return 'not run yet';
  if (s.crashed === 0) {
    if (s.done === 0) return 'no crash so far';
    return s.done === s.seeds ? `no crash on ${seedsWord(s.seeds)}` : `no crash on the ${seedsWord(s.done)} done`;
  }
  const at = s.crashAt.length > 0 ? `, at iteration${s.crashAt.length === 1 ? '' : 's'} ${s.crashAt.join(', ')}` : '';
  return `crashed on ${s.crashed} of ${s.seeds} seeds${at}`;
}

export const SORT_KEYS = ['grid', 'success', 'crashes', 'cost'] as const;
export type SortKey = (typeof SORT_KEYS)[number];
export const SORT_LABELS: Record<SortKey, string> = {
  grid: 'grid order',
  success: 'final success (best first)',
  crashes: 'crashes (most first)',
  cost: 'cost (cheapest first)',
};

export const FILTERS = ['all', 'crashed', 'stable'] as const;
export type CellFilter = (typeof FILTERS)[number];
export const FILTER_LABELS: Record<CellFilter, string> = {
  all: 'all cells',
  crashed: 'only crashed',
  stable: 'only without a crash',
};

/** A missing number sorts last, whichever the direction. */
function byNumber(a: number | null, b: number | null, dir: 1 | -1): number {
  if (a === null || b === null) return a === null ? (b === null ? 0 : 1) : -1;
  return (a - b) * dir;
}

/**
 * The cells in the chosen order (ties keep the grid order). Cost is rollouts per iteration, then
 * wall time: rollouts are what dynamic filtering spends, and do not depend on the machine.
 */
export function sortCells(summaries: readonly CellSummary[], key: SortKey): CellSummary[] {
  const indexed = summaries.map((s, i) => ({ s, i }));
  const cmp = (x: CellSummary, y: CellSummary): number => {
    switch (key) {
      case 'grid':
        return 0;
      case 'success':
        return byNumber(x.finalSuccess, y.finalSuccess, -1);
      case 'crashes':
        return y.crashed / Math.max(1, y.seeds) - x.crashed / Math.max(1, x.seeds) || byNumber(x.crashAt[0] ?? null, y.crashAt[0] ?? null, 1);
      case 'cost':
        return byNumber(x.rolloutsPerIter, y.rolloutsPerIter, 1) || byNumber(x.wallSeconds, y.wallSeconds, 1);
    }
  };
  return indexed.sort((p, q) => cmp(p.s, q.s) || p.i - q.i).map((p) => p.s);
}

export function filterCells(summaries: readonly CellSummary[], filter: CellFilter): CellSummary[] {
  if (filter === 'crashed') return summaries.filter((s) => s.crashed > 0);
  if (filter === 'stable') return summaries.filter((s) => s.crashed === 0);
  return [...summaries];
}

/** Workers at once: one per core left to the page, at most 4 (each holds a model and, on WebGPU, a device). */
const MAX_ARENA_WORKERS = 4;

export function arenaWorkerCount(cores: number | undefined): number {
  const n = cores !== undefined && Number.isFinite(cores) ? Math.floor(cores) - 1 : 1;
  return Math.max(1, Math.min(MAX_ARENA_WORKERS, n));
}

/** "not run yet" before any seed has begun, else "k of n seeds done". */
export function seedsText(s: CellSummary): string {
  return s.started === 0 ? 'not run yet' : `${s.done} of ${s.seeds} seeds done`;
}
