/**
 * The Arena view's state: the arena (an ArenaSpec: task, the levels of each design dimension,
 * seeds, iterations), and the runs of its grid. Run trains every (cell, seed) in a small pool of
 * trainer workers (the same worker and client as the main view), on the backend the main view
 * uses. Metric rows wait outside React state and reach it in one update every FLUSH_ARENA_MS, with
 * only the changed cells re-summarized; Stop ends the workers and keeps what has arrived.
 */
import { create } from 'zustand';
import type { DebugFault, TrainerEvent } from '../../workers/entry/api';
import { ARENA_PRESETS, arenaCells, arenaSpecToText, cellConfig, detectCrash, type ArenaCell, type ArenaSpec } from '../../workers/meta';
import type { MetricRow } from '../../workers/core/metrics';
import { arenaWorkerCount, emptyTrace, summarize, type CellFilter, type CellSummary, type SeedTrace, type SortKey } from './arenaModel';
import { useAppStore } from '../store';
import { useCompareStore } from '../compare/compareStore';
import { errorText } from '../store/errorText';
import { createTrainerSession, type TrainerSession } from '../trainerSession';

type ArenaPhase = 'idle' | 'running';

/** About four grid updates a second: enough to watch, few enough that 16 runs stay cheap to draw. */
const FLUSH_ARENA_MS = 250;

/** The diagnosis metric (workers/core/metrics.ts): the share of the update's gradient from negative-advantage tokens outside a strict clip. */
export const DIAG_METRIC = 'neg_out_grad_share';

interface ArenaProgress {
  /** Iterations arrived, over every run. */
  iters: number;
  itersTotal: number;
  runsDone: number;
  runsTotal: number;
}

export interface ArenaState {
  spec: ArenaSpec;
  /** The spec's cells, or the reason the spec gives none. */
  cells: ArenaCell[];
  skipped: { label: string; why: string }[];
  specError: string | null;
  phase: ArenaPhase;
  /** The seeds per cell the current or last run trains (a link's `done:`), or null for all of them. */
  runSeeds: number | null;
  summaries: Record<string, CellSummary>;
  progress: ArenaProgress;
  workers: number;
  sort: SortKey;
  filter: CellFilter;
  /** A new arena: the grid's results are cleared. */
  setSpec(spec: ArenaSpec): void;
  /** Opens the view on this arena (a share link's `arena=`) and, with `done`, runs its first `done` seeds of every cell. */
  restore(spec: ArenaSpec, done?: number): void;
  setSort(sort: SortKey): void;
  setFilter(filter: CellFilter): void;
  /** Runs the grid: every seed, or only the first `seeds` seeds of every cell (a link's progress). */
  run(seeds?: number): void;
  stop(): void;
  /** The cell's config at its first seed, in the main view. */
  openCell(cellId: string): void;
}

interface Job {
  cell: ArenaCell;
  seed: number;
  /** Index into the cell's traces. */
  k: number;
}

/** Per (cell, seed), outside React state: the rows as they arrive. */
interface Live {
  rows: MetricRow[];
  nonFinite: { iter: number; message: string } | null;
  error: string | null;
  done: boolean;
}

let generation = 0;
/** Per pool slot: its trainer session (a crashed worker is replaced by the slot's next job). */
let sessions: Array<TrainerSession | undefined> = [];
let live = new Map<string, Live[]>();
const dirty = new Set<string>();
let flushTimer: ReturnType<typeof setTimeout> | null = null;

/** The grid's trace of one run: its rows reduced to what the cell shows, and its crash verdict. */
export function traceOf(seed: number, l: Live): SeedTrace {
  const t = emptyTrace(seed);
  for (const r of l.rows) {
    t.iters.push(r.iter);
    t.success.push(r.success_rate);
    const d = r[DIAG_METRIC];
    t.diag.push(typeof d === 'number' ? d : NaN);
    t.rollouts.push(r.rollouts);
    t.ms.push(r.ms);
  }
  // The trainer rolled a non-finite update back and stopped: a crash at that iteration.
  t.crash = detectCrash(l.rows, { nonFiniteAt: l.nonFinite?.iter ?? null });
  t.done = l.done;
  t.error = l.error;
  return t;
}

function cellsOf(spec: ArenaSpec): Pick<ArenaState, 'cells' | 'skipped' | 'specError'> {
  try {
    const { cells, skipped } = arenaCells(spec);
    return { cells, skipped, specError: cells.length === 0 ? 'no combination of these levels is a valid run (see the skipped ones)' : null };
  } catch (e) {
    return { cells: [], skipped: [], specError: errorText(e) };
  }
}

function emptySummaries(cells: ArenaCell[], seeds: number[]): Record<string, CellSummary> {
  const out: Record<string, CellSummary> = {};
  for (const c of cells) out[c.id] = summarize(c.id, seeds.map(emptyTrace));
  return out;
}

function emptyProgress(cells: ArenaCell[], spec: ArenaSpec): ArenaProgress {
  const runs = cells.length * spec.seeds.length;
  return { iters: 0, itersTotal: runs * spec.iters, runsDone: 0, runsTotal: runs };
}

/** Seeds of a new arena: 4 shows a spread at a quarter of the presets' 8 seeds' cost. */
const DEFAULT_ARENA_SEEDS = [1, 2, 3, 4];

/** The first preset (the clipping comparison) on DEFAULT_ARENA_SEEDS. */
function initialSpec(): ArenaSpec {
  return { ...structuredClone(ARENA_PRESETS[0]!.spec), seeds: DEFAULT_ARENA_SEEDS };
}

export const useArenaStore = create<ArenaState>()((set, get) => {
  const initialCells = cellsOf(initialSpec());
  function killAll(): void {
    for (const s of sessions) s?.close();
    sessions = [];
  }

  function flush(): void {
    if (flushTimer !== null) clearTimeout(flushTimer);
    flushTimer = null;
    if (dirty.size === 0) return;
    const { spec } = get();
    const summaries = { ...get().summaries };
    for (const id of dirty) {
      const runs = live.get(id);
      if (runs) summaries[id] = summarize(id, runs.map((l, k) => traceOf(spec.seeds[k]!, l)));
    }
    dirty.clear();
    let iters = 0;
    let runsDone = 0;
    for (const runs of live.values()) {
      for (const l of runs) {
        iters += l.rows.length;
        if (l.done || l.error) runsDone++;
      }
    }
    set({ summaries, progress: { ...get().progress, iters, runsDone } });
  }

  function touch(cellId: string): void {
    dirty.add(cellId);
    if (flushTimer === null) flushTimer = setTimeout(flush, FLUSH_ARENA_MS);
  }

  function clearResults(spec: ArenaSpec, cells: ArenaCell[]): void {
    live = new Map(cells.map((c) => [c.id, spec.seeds.map(() => ({ rows: [], nonFinite: null, error: null, done: false }))]));
    dirty.clear();
    set({ summaries: emptySummaries(cells, spec.seeds), progress: emptyProgress(cells, spec) });
  }

  /** What a crash or hang of the worker in `slot` means for the job it runs. */
  const slotDeath: Array<((message: string) => void) | null> = [];
  function slotSession(slot: number): TrainerSession {
    sessions[slot] ??= createTrainerSession({ onFailure: (m) => slotDeath[slot]?.(m) });
    return sessions[slot]!;
  }

  /**
   * One (cell, seed) run in a pool worker. The worker is kept for the slot's next run (configure
   * starts afresh, and a pretrained start it has cached is reused); a crashed one is replaced.
   */
  async function runJob(slot: number, job: Job, gen: number): Promise<void> {
    const l = live.get(job.cell.id)![job.k]!;
    const { spec } = get();
    let config;
    try {
      config = cellConfig(spec, job.cell, job.seed);
    } catch (e) {
      l.error = `seed ${job.seed}: ${errorText(e)}`;
      touch(job.cell.id);
      return;
    }
    let died: string | null = null;
    slotDeath[slot] = (m) => (died = m);
    const session = slotSession(slot);
    const alive = () => gen === generation && died === null;
    try {
      await session.call((t) => t.configure(config, useAppStore.getState().backend));
      await session.call((t) =>
        t.subscribe(
          session.events((e: TrainerEvent) => {
            if (!alive() || e.type !== 'non-finite') return;
            l.rows = l.rows.filter((r) => r.iter <= e.rolledBackTo);
            l.nonFinite = { iter: e.iter, message: e.message };
            touch(job.cell.id);
          }),
        ),
      );
      // Watched while it trains (a pretrained start may be silent for longer while it is built).
      session.watch();
      await session.call((t) =>
        t.start(
          session.metrics((rows) => {
            if (!alive() || rows.length === 0) return;
            if (armedNaN && armedNaN.cell === job.cell.id && armedNaN.seed === job.seed && rows.some((r) => r.iter >= armedNaN!.afterIter)) {
              armedNaN = null;
              void session.call((t2) => t2.debug('nan'));
            }
            l.rows.push(...rows);
            touch(job.cell.id);
          }),
          spec.iters,
        ),
      );
      if (gen !== generation) return;
      l.done = true;
    } catch (e) {
      if (gen === generation) l.error = `seed ${job.seed}: ${died ?? errorText(e)}`;
    } finally {
      slotDeath[slot] = null;
      session.unwatch();
    }
    if (gen === generation) touch(job.cell.id);
  }

  return {
    spec: initialSpec(),
    ...initialCells,
    phase: 'idle',
    runSeeds: null,
    summaries: emptySummaries(initialCells.cells, initialSpec().seeds),
    progress: emptyProgress(initialCells.cells, initialSpec()),
    workers: arenaWorkerCount(typeof navigator !== 'undefined' ? navigator.hardwareConcurrency : undefined),
    sort: 'grid',
    filter: 'all',

    setSpec(spec) {
      // The same arena again (a link that changed only the config) leaves a running arena running.
      if (arenaSpecToText(spec) === arenaSpecToText(get().spec)) return;
      if (get().phase === 'running') get().stop();
      const next = cellsOf(spec);
      set({ spec, ...next });
      clearResults(spec, next.cells);
    },

    restore(spec, done) {
      get().setSpec(spec);
      useCompareStore.getState().setTab('arena');
      if (done !== undefined && done > 0 && get().phase === 'idle') get().run(done);
    },

    setSort: (sort) => set({ sort }),
    setFilter: (filter) => set({ filter }),

    run(seeds) {
      const { spec, cells, phase } = get();
      if (phase === 'running' || cells.length === 0) return;
      const gen = ++generation;
      clearResults(spec, cells);
      const jobs: Job[] = [];
      // Seed-major: the first seed of every cell comes in first, so the whole grid fills early.
      spec.seeds.slice(0, seeds ?? spec.seeds.length).forEach((seed, k) => {
        for (const cell of cells) jobs.push({ cell, seed, k });
      });
      const pool = Math.min(get().workers, jobs.length);
      set({ phase: 'running', runSeeds: seeds ?? null });
      let next = 0;
      const worker = async (slot: number) => {
        while (gen === generation && next < jobs.length) await runJob(slot, jobs[next++]!, gen);
      };
      void Promise.all(Array.from({ length: pool }, (_, slot) => worker(slot))).then(() => {
        if (gen !== generation) return;
        flush();
        killAll();
        set({ phase: 'idle' });
      });
    },

    stop() {
      generation++;
      killAll();
      flush();
      set({ phase: 'idle' });
    },

    openCell(cellId) {
      const { spec, cells } = get();
      const cell = cells.find((c) => c.id === cellId);
      const seed = spec.seeds[0];
      if (!cell || seed === undefined) return;
      useAppStore.getState().setConfig(cellConfig(spec, cell, seed));
      useCompareStore.getState().setTab('train');
    },
  };
});

/**
 * The progress a link carries: how many of the arena's seeds (in order) every cell has finished, or,
 * while a run of the first k seeds is on (a link's own), k.
 */
export function arenaSeedsDone(a: Pick<ArenaState, 'cells' | 'summaries' | 'phase' | 'runSeeds'>): number {
  if (a.phase === 'running' && a.runSeeds !== null) return a.runSeeds;
  let k = Infinity;
  for (const c of a.cells) {
    k = Math.min(k, a.summaries[c.id]?.doneInOrder ?? 0);
  }
  return Number.isFinite(k) ? k : 0;
}

/** A NaN armed by a test for one (cell, seed) job: injected once that run reports `afterIter`. */
let armedNaN: { cell: string; seed: number; afterIter: number } | null = null;

declare global {
  interface Window {
    /** Reliability tests provoke a fault in the run a pool slot is training (see __playgroundDebug). */
    __arenaDebug?: (slot: number, fault: DebugFault, ms?: number) => Promise<void>;
    /**
     * Arms a NaN for one (cell, seed) run, injected when its rows reach `afterIter`: a test that
     * calls __arenaDebug races a short run that may end before the call arrives.
     */
    __arenaArmNaN?: (cell: string, seed: number, afterIter: number) => void;
  }
}
if (import.meta.env.MODE !== 'production' && typeof window !== 'undefined') {
  window.__arenaDebug = async (slot, fault, ms) => {
    const session = sessions[slot];
    if (session?.live) await session.call((t) => t.debug(fault, ms));
  };
  window.__arenaArmNaN = (cell, seed, afterIter) => {
    armedNaN = { cell, seed, afterIter };
  };
}
