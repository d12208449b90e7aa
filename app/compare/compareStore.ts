/**
 * The Compare view: two runs side by side from the same seed, each in a trainer worker of its own.
 * Run A is a snapshot of the playground's config; run B is a copy edited in the view. A change to a
 * run's config restarts that run from iteration 0 (the other keeps its data). Worker calls of each
 * run go through its own queue; metric rows are batched to about 10 store updates a second. A
 * crashed or hung worker, or a NaN roll-back, is reported by the run's name and touches only it.
 */
import { create } from 'zustand';
import type { BackendChoice, BackendInfo, DebugFault, TrainerEvent } from '../../workers/entry/api';
import { ConfigError, withField, withMethods, type RunConfig } from '../../workers/meta';
import type { MetricRow } from '../../workers/core/metrics';
import type { ParamValue } from '../../workers/core/methods/params';
import { useAppStore } from '../store';
import { FLUSH_MS, SERIES_CAP } from '../store/metricsSlice';
import { errorText } from '../store/errorText';
import { createTrainerSession, WorkerGone, type TrainerSession } from '../trainerSession';
import { carryChanges } from './diff';

export type Side = 'a' | 'b';
export const SIDES: readonly Side[] = ['a', 'b'];
export const SIDE_NAME: Record<Side, 'A' | 'B'> = { a: 'A', b: 'B' };

/** `failed`: the worker crashed or hung; the run's data stays, Restart resumes it. */
export type ComparePhase = 'idle' | 'configuring' | 'running' | 'pausing' | 'resetting' | 'failed';

export interface CompareRun {
  config: RunConfig;
  series: MetricRow[];
  phase: ComparePhase;
  backendInfo: BackendInfo | null;
  /** The run's last error, named ("Run B failed: ..."), until dismissed or the run restarts. */
  error: string | null;
}

export type ViewTab = 'train' | 'compare' | 'arena';

export interface CompareState {
  tab: ViewTab;
  setTab(tab: ViewTab): void;
  a: CompareRun;
  b: CompareRun;
  /** The iteration a "run to" stops both runs at, or null. */
  runUntil: number | null;
  /** Set once A has been taken from the playground. */
  snapped: boolean;
  /** A one-off note (B's changes that could not be carried onto a new A). */
  notice: string | null;
  /** A = the playground's config now; B keeps its changes against A. */
  takeA(): void;
  /** Opens the view on these two runs (a share link's `compare=`) and, with `step`, runs both to that iteration. */
  restore(a: RunConfig, b: RunConfig, step?: number): void;
  /** The seed both runs share. */
  setSeed(seed: number): string | null;
  /** Edits B; returns the ConfigError message (naming the key) when refused. */
  setFieldB(key: string, value: ParamValue): string | null;
  setMethodsB(ids: string[]): string | null;
  start(untilIter?: number): Promise<void>;
  pause(): Promise<void>;
  reset(): Promise<void>;
  /** A failed run: a fresh worker from its last snapshot, replayed to its last shown iteration. */
  restart(side: Side): Promise<void>;
  dismissError(side: Side): void;
  dismissNotice(): void;
}

/** Per run, outside React state: its trainer session, its call queue, the rows waiting for a flush. */
interface Runner {
  session: TrainerSession;
  chain: Promise<void>;
  runPromise: Promise<void> | null;
  /** The config and backend the worker's run was built from (null: build it before the next run). */
  builtKey: string | null;
  /** Bumped when the run's rows are cleared or its worker dies: older callbacks are ignored. */
  epoch: number;
  pending: MetricRow[];
}

let runners: Record<Side, Runner>;
let flushTimer: ReturnType<typeof setTimeout> | null = null;

function emptyRun(config: RunConfig): CompareRun {
  return { config, series: [], phase: 'idle', backendInfo: null, error: null };
}

export const useCompareStore = create<CompareState>()((set, get) => {
  const run = (side: Side) => get()[side];
  const patch = (side: Side, p: Partial<CompareRun>) => set((s) => ({ [side]: { ...s[side], ...p } }) as Partial<CompareState>);
  const backend = (): BackendChoice => useAppStore.getState().backend;
  const keyOf = (side: Side) => JSON.stringify([run(side).config, backend()]);

  const enqueue = (side: Side, op: () => Promise<void>): Promise<void> => {
    const r = runners[side];
    const p = r.chain.then(op).catch((e: unknown) => {
      if (!(e instanceof WorkerGone) && run(side).phase !== 'failed') patch(side, { error: `Run ${SIDE_NAME[side]}: ${errorText(e)}`, phase: 'idle' });
    });
    r.chain = p;
    return p;
  };

  // PLUMBING: batched metric rows, one store update for both runs.
  function flush(): void {
    if (flushTimer !== null) clearTimeout(flushTimer);
    flushTimer = null;
    const next: Partial<Record<Side, CompareRun>> = {};
    for (const side of SIDES) {
      const r = runners[side];
      if (r.pending.length === 0) continue;
      const rows = r.pending;
      r.pending = [];
      const series = run(side).series.concat(rows);
      next[side] = { ...run(side), series: series.length > SERIES_CAP ? series.slice(series.length - SERIES_CAP) : series };
    }
    if (next.a || next.b) set(next);
  }

  function append(side: Side, rows: MetricRow[], epoch: number): void {
    const r = runners[side];
    if (epoch !== r.epoch || rows.length === 0) return;
    r.pending.push(...rows);
    if (flushTimer === null) flushTimer = setTimeout(flush, FLUSH_MS);
  }

  function clearRows(side: Side): void {
    const r = runners[side];
    r.epoch++;
    r.pending = [];
    r.session.resetSnapshots();
    patch(side, { series: [] });
  }

  const lastIter = (side: Side): number => {
    flush();
    const s = run(side).series;
    return s[s.length - 1]?.iter ?? 0;
  };

  function onEvent(side: Side, epoch: number, e: TrainerEvent): void {
    const r = runners[side];
    if (epoch !== r.epoch) return;
    if (e.type === 'snapshot') {
      r.session.keepSnapshot(e.snapshot);
    } else if (e.type === 'non-finite') {
      flush();
      patch(side, { series: run(side).series.filter((row) => row.iter <= e.rolledBackTo), error: `Run ${SIDE_NAME[side]}: ${e.message}` });
    } else if (e.type === 'device-lost') {
      patch(side, { error: `Run ${SIDE_NAME[side]}: ${e.message}` });
    }
  }

  /** The run's worker is gone (its session ended it): drop its pending calls, keep its data, offer a restart. */
  function failed(side: Side, message: string): void {
    if (run(side).phase === 'failed') return;
    const r = runners[side];
    flush();
    r.chain = Promise.resolve();
    r.runPromise = null;
    r.builtKey = null;
    r.epoch++;
    patch(side, { phase: 'failed', error: `Run ${SIDE_NAME[side]} failed: ${message}` });
  }

  const newRunner = (side: Side): Runner => ({
    session: createTrainerSession({ onFailure: (m) => failed(side, m) }),
    chain: Promise.resolve(),
    runPromise: null,
    builtKey: null,
    epoch: 0,
    pending: [],
  });
  runners = { a: newRunner('a'), b: newRunner('b') };

  // Each of these runs inside the side's queue.
  async function stopRun(side: Side): Promise<void> {
    const r = runners[side];
    if (!r.runPromise || !r.session.live) return;
    patch(side, { phase: 'pausing' });
    await r.session.call((t) => t.pause());
    await r.session.call(() => r.runPromise!);
  }

  async function subscribe(side: Side): Promise<void> {
    const r = runners[side];
    const epoch = r.epoch;
    await r.session.call((t) => t.subscribe(r.session.events((e) => onEvent(side, epoch, e))));
  }

  /** Builds the run from its config when the config or the backend choice changed. */
  async function ensureBuilt(side: Side): Promise<void> {
    const r = runners[side];
    const key = keyOf(side);
    if (r.builtKey === key && r.session.live) return;
    await stopRun(side);
    clearRows(side);
    patch(side, { phase: 'configuring', backendInfo: null });
    try {
      const config = run(side).config;
      const info = await r.session.call((t) => t.configure(config, backend()));
      await subscribe(side);
      r.builtKey = key;
      patch(side, { backendInfo: info });
    } finally {
      if (run(side).phase === 'configuring') patch(side, { phase: 'idle' });
    }
  }

  function launch(side: Side, untilIter: number | undefined): void {
    const r = runners[side];
    const epoch = r.epoch;
    const onMetrics = r.session.metrics((rows) => append(side, rows, epoch));
    patch(side, { phase: 'running' });
    // Watched while it trains: building a run (a pretrained start) may be silent for longer.
    r.session.watch();
    const mine: Promise<void> = r.session
      .call((t) => t.start(onMetrics, untilIter))
      .catch((e: unknown) => {
        if (r.runPromise === mine && !(e instanceof WorkerGone)) patch(side, { error: `Run ${SIDE_NAME[side]}: ${errorText(e)}` });
      })
      .finally(() => {
        if (r.runPromise !== mine) return;
        r.session.unwatch();
        flush();
        r.runPromise = null;
        patch(side, { phase: 'idle' });
      });
    r.runPromise = mine;
  }

  /** A config change: the run starts again from iteration 0 (built before its next start). */
  function invalidate(side: Side): void {
    runners[side].builtKey = null;
    // The run starts again from 0: an earlier "run to" no longer says where the pair is going.
    set({ runUntil: null });
    void enqueue(side, async () => {
      await stopRun(side);
      clearRows(side);
    });
  }

  function refuse(e: unknown): string {
    if (e instanceof ConfigError) return e.message;
    return errorText(e);
  }

  // A change of the playground's backend choice rebuilds both runs on it.
  useAppStore.subscribe((s, prev) => {
    if (s.backend === prev.backend) return;
    for (const side of SIDES) if (runners[side].builtKey !== null) invalidate(side);
  });

  return {
    tab: 'train',
    a: emptyRun(useAppStore.getState().config),
    b: emptyRun(useAppStore.getState().config),
    runUntil: null,
    snapped: false,
    notice: null,

    setTab(tab) {
      set({ tab });
      if (tab === 'compare' && !get().snapped) get().takeA();
    },

    takeA() {
      const base = useAppStore.getState().config;
      const { config: b, skipped } = get().snapped ? carryChanges(run('a').config, run('b').config, base) : { config: base, skipped: [] };
      const changedA = JSON.stringify(base) !== JSON.stringify(run('a').config);
      const changedB = JSON.stringify(b) !== JSON.stringify(run('b').config);
      set({
        snapped: true,
        notice: skipped.length ? `Some of B's changes do not fit the new A and were dropped: ${skipped.join('; ')}` : null,
      });
      if (changedA) {
        patch('a', { config: base });
        invalidate('a');
      }
      if (changedB) {
        patch('b', { config: b });
        invalidate('b');
      }
    },

    restore(a, b, step) {
      set({ tab: 'compare', snapped: true, notice: null });
      for (const [side, config] of [['a', a], ['b', b]] as const) {
        if (JSON.stringify(config) === JSON.stringify(run(side).config)) continue;
        patch(side, { config });
        invalidate(side);
      }
      if (step !== undefined && step > 0) void get().start(step);
    },

    setSeed(seed) {
      try {
        const a = withField(run('a').config, 'seed', seed);
        const b = withField(run('b').config, 'seed', seed);
        if (a.seed === run('a').config.seed && b.seed === run('b').config.seed) return null;
        patch('a', { config: a });
        patch('b', { config: b });
        invalidate('a');
        invalidate('b');
        return null;
      } catch (e) {
        return refuse(e);
      }
    },

    setFieldB(key, value) {
      try {
        const b = withField(run('b').config, key, value);
        if (JSON.stringify(b) === JSON.stringify(run('b').config)) return null;
        patch('b', { config: b });
        invalidate('b');
        return null;
      } catch (e) {
        return refuse(e);
      }
    },

    setMethodsB(ids) {
      try {
        patch('b', { config: withMethods(run('b').config, ids) });
        invalidate('b');
        return null;
      } catch (e) {
        return refuse(e);
      }
    },

    async start(untilIter) {
      set({ runUntil: untilIter ?? null });
      await Promise.all(
        SIDES.map((side) =>
          enqueue(side, async () => {
            if (run(side).phase === 'failed' || runners[side].runPromise) return;
            await ensureBuilt(side);
            if (untilIter !== undefined && lastIter(side) >= untilIter) return;
            patch(side, { error: null });
            launch(side, untilIter);
          }),
        ),
      );
    },

    async pause() {
      await Promise.all(SIDES.map((side) => enqueue(side, () => stopRun(side))));
    },

    async reset() {
      set({ runUntil: null });
      await Promise.all(
        SIDES.map((side) =>
          enqueue(side, async () => {
            if (run(side).phase === 'failed') {
              clearRows(side);
              patch(side, { phase: 'idle', error: null, backendInfo: null });
              return;
            }
            await stopRun(side);
            clearRows(side);
            patch(side, { error: null });
            const r = runners[side];
            if (!r.session.live || r.builtKey !== keyOf(side)) return;
            patch(side, { phase: 'resetting' });
            try {
              await r.session.call((t) => t.reset());
              // Events of the new run carry the new epoch (snapshots of the old one are dropped).
              await subscribe(side);
            } finally {
              patch(side, { phase: 'idle' });
            }
          }),
        ),
      );
    },

    restart: (side) =>
      enqueue(side, async () => {
        if (run(side).phase !== 'failed') return;
        const r = runners[side];
        const to = lastIter(side);
        r.epoch++;
        patch(side, { phase: 'configuring', error: null });
        try {
          const config = run(side).config;
          const info = await r.session.call((t) => t.configure(config, backend(), r.session.resumeFrom(to)));
          await subscribe(side);
          r.builtKey = keyOf(side);
          patch(side, { backendInfo: info });
        } finally {
          if (run(side).phase === 'configuring') patch(side, { phase: 'idle' });
        }
      }),

    dismissError: (side) => patch(side, { error: null }),
    dismissNotice: () => set({ notice: null }),
  };
});

declare global {
  interface Window {
    /** Reliability tests provoke faults in one compared run (see __playgroundDebug). */
    __compareDebug?: (side: Side, fault: DebugFault, ms?: number) => Promise<void>;
  }
}
if (import.meta.env.MODE !== 'production' && typeof window !== 'undefined') {
  window.__compareDebug = async (side, fault, ms) => {
    const session = runners[side].session;
    if (session.live) await session.call((t) => t.debug(fault, ms));
  };
}

/**
 * The iteration a link to the pair carries: where a "run to" (a link's own included) takes both
 * runs, else the iteration both have reached while neither is busy; undefined before either.
 */
export function pairStep(c: Pick<CompareState, 'a' | 'b' | 'runUntil'>): number | undefined {
  const last = (r: CompareRun) => r.series[r.series.length - 1]?.iter ?? 0;
  const idle = (r: CompareRun) => r.phase === 'idle' || r.phase === 'failed';
  const reached = idle(c.a) && idle(c.b) ? Math.min(last(c.a), last(c.b)) : 0;
  const step = Math.max(reached, c.runUntil ?? 0);
  return step > 0 ? step : undefined;
}
