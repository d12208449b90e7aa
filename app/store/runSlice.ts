/**
 * The run: backend, phase and errors. These actions are the only place the UI talks to the worker.
 * Worker calls go through one queue so configure / start / pause / step / reset never interleave;
 * `start` only kicks the run off, so the queue stays free for `pause`. Config edits reconfigure the
 * trainer after a short debounce (Reset semantics); Start, Step and Reset flush a pending one first.
 */
import type { StateCreator } from 'zustand';
import type { BackendInfo, PretrainSummary, TrainerApi, TrainerEvent } from '../../workers/entry/api';
import type { RunCost } from '../../workers/core/runCost';
import type { TrainerSnapshot } from '../../workers/core/trainer';
import { unpackBatchInSlices } from '../../workers/formats/batchDump';
import { readImport, type ImportRead } from '../../workers/formats/importRun';
import type { DecodedLink } from '../../workers/content/shareLink';
import { eventsCallback, getTrainer, killWorker, metricsCallback, setWorkerErrorHandler, type Trainer } from '../trainerClient';
import type { AppState } from '.';
import { errorText } from './errorText';
import { dumpAt, liveIteration, useExplainStore } from '../explain/explainStore';

export type RunPhase = 'configuring' | 'idle' | 'running' | 'pausing' | 'stepping' | 'resetting';

/** The worker died (uncaught error) or stopped answering; the charts keep what they had. */
export interface WorkerFailure {
  message: string;
  /** The last iteration shown: a restart resumes right after it. */
  lastIter: number;
  /** The iteration of the snapshot the restart starts from (0: the initial weights). */
  snapshotIter: number;
}

/** A link's run past these asks before it is built: seconds per CPU iteration, bytes of memory. */
export const LINK_ASK_SECONDS = 3;
export const LINK_ASK_BYTES = 2 ** 30;

/** A link whose run would be slow or large, held until the user says to build it. */
export interface LinkGate {
  cost: RunCost;
  /** The link's step=N, run to once it is built. */
  step: number | null;
}

export interface RunSlice {
  phase: RunPhase;
  /** Set while a costly link waits for the user's word (nothing is built meanwhile). */
  linkGate: LinkGate | null;
  /** Builds (and with step=N runs) the held link's run, or leaves it unbuilt. */
  answerLinkGate(build: boolean): void;
  /** True once the worker holds a run built from the current config. */
  configured: boolean;
  backendInfo: BackendInfo | null;
  /** The last error from the worker (a rejected call), shown in an alert until dismissed. */
  error: string | null;
  /** A recovered fault worth telling (a lost GPU device), shown in a status notice. */
  notice: string | null;
  /** Set when the worker crashed or hung, until the user restarts it. */
  failure: WorkerFailure | null;
  /**
   * The iteration the worker last said it is computing ('working' events, sent during CPU
   * iterations): since its first such event, and the latest (Date.now()).
   */
  working: { iter: number; since: number; at: number } | null;
  /**
   * True from a config change until the worker holds a run of that config: the metrics on screen
   * until then are the previous config's (lesson lines must not be measured from them).
   */
  configPending: boolean;
  /** The pretrained start of the current run (init=pretrained): progress, then its figures. */
  pretrain: { done: number; steps: number; start?: PretrainSummary } | null;
  /** Starts a fresh worker from the last snapshot and replays to the last shown iteration. */
  restartWorker(): Promise<void>;
  dismissNotice(): void;
  init(): void;
  /** Rebuilds the run from the config after `delayMs` (edits coalesce). */
  requestReconfigure(delayMs?: number): void;
  /** Trains until Pause, or until iteration `untilIter` (a link's step=N, "run to") and pauses there. */
  start(untilIter?: number): Promise<void>;
  /** Milliseconds the trainer waits between iterations (0: full speed). */
  speedDelayMs: number;
  /** The iteration the current run stops at, or null (until Pause). */
  runUntil: number | null;
  /** Sets the pace; a running run goes on at the new pace from the next iteration. */
  setSpeed(delayMs: number): void;
  pause(): Promise<void>;
  step(): Promise<void>;
  /**
   * One iteration, as step(), played stage by stage (docs/EXPLAIN.md "Step through"): the batch at
   * each of its stages comes back, and step-through walks it; the group view and the inspector show
   * the stage's batch meanwhile.
   */
  stepThrough(): Promise<void>;
  reset(): Promise<void>;
  dismissError(): void;
  /**
   * Applies a decoded share link: config, backend and view. `initial` (the page's own link) only
   * sets state, as init() configures next; a later link (hashchange) rebuilds the run and, with
   * step=N, runs to iteration N.
   */
  applyLink(link: DecodedLink, initial: boolean): void;
  /** Reads the last iteration's batch from the worker for the group and trajectory views. */
  loadBatch(): Promise<void>;
  /** The last batch as its JSON file, written by the worker; null while running or before any iteration. */
  batchJson(): Promise<Blob | null>;
  /** Shows a run file's metrics without re-running; false (with importErrors set) if it is bad. */
  importRun(file: string | ImportRead, fileName: string): Promise<boolean>;
  /** Leaves an imported run: back to the previous config, or (`keepConfig`) live with its config. */
  closeImported(keepConfig: boolean): Promise<void>;
}

/** 250 ms: typing "128" into a field reconfigures once, not three times. */
const RECONFIGURE_DEBOUNCE_MS = 250;

let chain: Promise<void> = Promise.resolve();
let reconfigureTimer: ReturnType<typeof setTimeout> | null = null;
let reconfigureWanted = false;
let runPromise: Promise<void> | null = null;
/** Set while a pace change restarts the run, so its end does not flash "idle". */
let restarting = false;
/** The backend choice the worker's run was built with: another choice needs a full rebuild. */
let configuredBackend: string | null = null;
let initialized = false;
/** The config and backend before an import, restored when the imported run is closed. */
let beforeImport: Pick<AppState, 'config' | 'backend'> | null = null;
/** The run's latest finite snapshot (kept here, outside React state: it holds the weights). */
let snapshots: TrainerSnapshot[] = [];
/**
 * The iteration of the snapshot taken where the settings last changed mid-run: older snapshots
 * hold weights trained under other settings, so a restart never replays from them.
 */
let snapshotFloor = 0;
/** Snapshots kept: a snapshot event can arrive before the metric rows of the iterations it covers. */
const SNAPSHOTS_KEPT = 3;

/** The newest snapshot at or before `iter` (a restart replays forward from it to `iter`). */
function snapshotAtOrBefore(iter: number): TrainerSnapshot | null {
  for (let i = snapshots.length - 1; i >= 0; i--) if (snapshots[i]!.iter <= iter) return snapshots[i]!;
  return null;
}
let heartbeat: ReturnType<typeof setInterval> | null = null;
/**
 * A worker that answers no ping and sends nothing for this long is declared hung, in every phase
 * (idle, stepping, exporting, pausing, running). A CPU iteration blocks the worker from answering
 * pings (for tens of seconds at the largest settings), but it sends 'working' events between its
 * stages; GPU iterations yield while they wait.
 */
export const HANG_MS = 15_000;
/** Building a run may compile GPU kernels one at a time, blocking the worker longer than an iteration does. */
export const CONFIGURE_HANG_MS = 60_000;
const PING_EVERY_MS = 3_000;

/** A call cut short because its worker crashed or hung: the failure notice says so, not an error. */
class WorkerGone extends Error {}

interface Gone {
  promise: Promise<never>;
  reject(e: WorkerGone): void;
}
function newGone(): Gone {
  let reject!: (e: WorkerGone) => void;
  const promise = new Promise<never>((_, r) => (reject = r));
  promise.catch(() => {});
  return { promise, reject };
}
/** Rejects when the current worker fails, so no call waiting on it (an export, a step) waits forever. */
let gone = newGone();

/** A call to the worker that settles: with its answer, or with WorkerGone if the worker fails first. */
function call<T>(fn: (t: Trainer) => Promise<T>): Promise<T> {
  return Promise.race([fn(getTrainer()), gone.promise]);
}

export const createRunSlice: StateCreator<AppState, [], [], RunSlice> = (set, get) => {
  const enqueue = (op: () => Promise<void>): Promise<void> => {
    const p = chain.then(op).catch((e: unknown) => {
      if (!(e instanceof WorkerGone)) set({ error: errorText(e) });
    });
    chain = p;
    return p;
  };

  const stopRun = async () => {
    if (!runPromise) return;
    set({ phase: 'pausing' });
    await call((t) => t.pause());
    await Promise.race([runPromise, gone.promise]);
  };

  const configureNow = async () => {
    reconfigureWanted = false;
    await stopRun();
    // Start, Step or a settings change after the worker died builds the run on a new worker: the
    // notice about the dead one goes, and the new one is watched as the first was.
    if (get().failure) {
      set({ failure: null });
      startHeartbeat();
    }
    set({ phase: 'configuring', working: null, pretrain: null });
    get().clearMetrics();
    snapshots = [];
    snapshotFloor = 0;
    try {
      // Subscribed first: a long configure (a restart's replay, a pretrained start) sends events the heartbeat hears.
      await call((t) => t.subscribe(eventsCallback(onEvent)));
      const info = await call((t) => t.configure(get().config, get().backend));
      configuredBackend = get().backend;
      set({ backendInfo: info, configured: true, configPending: reconfigureWanted });
    } catch (e) {
      set({ backendInfo: null, configured: false });
      throw e;
    } finally {
      set({ phase: 'idle' });
    }
  };

  function onEvent(e: TrainerEvent): void {
    if (e.type === 'pretrain') {
      set({ pretrain: { done: e.done, steps: e.steps, ...(e.start ? { start: e.start } : {}) } });
    } else if (e.type === 'working') {
      const now = Date.now();
      const w = get().working;
      set({ working: w?.iter === e.iter ? { ...w, at: now } : { iter: e.iter, since: now, at: now } });
    } else if (e.type === 'snapshot') {
      if (e.snapshot.iter < snapshotFloor) return;
      snapshots = [...snapshots, e.snapshot].slice(-SNAPSHOTS_KEPT);
    } else if (e.type === 'device-lost') {
      get().addMarker({ iter: e.iter, kind: 'device-lost', label: 'GPU device lost' });
      set({ notice: e.message });
    } else if (e.type === 'non-finite') {
      // Iterations after the snapshot are recomputed by the next run: show each only once.
      get().truncateAfter(e.rolledBackTo);
      get().addMarker({ iter: e.iter, kind: 'non-finite', label: 'NaN: rolled back' });
      set({ error: e.message });
    }
  }

  const lastShownIter = () => {
    get().flushMetrics();
    return get().series[get().series.length - 1]?.iter ?? 0;
  };

  /** The worker is gone: drop every call waiting on it, keep the charts, offer a restart. */
  function workerFailed(message: string): void {
    if (get().failure) return;
    stopHeartbeat();
    killWorker();
    gone.reject(new WorkerGone(message));
    gone = newGone();
    chain = Promise.resolve();
    runPromise = null;
    reconfigureWanted = false;
    const lastIter = lastShownIter();
    set((s) => ({
      failure: { message, lastIter, snapshotIter: snapshotAtOrBefore(lastIter)?.iter ?? 0 },
      phase: 'idle',
      configured: false,
      // Rows the dead worker had already posted are dropped; the series keeps what was shown.
      metricsEpoch: s.metricsEpoch + 1,
      // An imported run's batch is the file's, not the worker's: it stays on screen.
      ...(s.imported && s.batchEpoch === s.metricsEpoch ? { batchEpoch: s.metricsEpoch + 1 } : {}),
    }));
  }

  function startHeartbeat(): void {
    stopHeartbeat();
    let waiting = false;
    let aliveAt = Date.now();
    let lastRow = get().series[get().series.length - 1];
    heartbeat = setInterval(() => {
      // Metrics or 'working' events prove the worker alive even while a ping queues behind them.
      const row = get().series[get().series.length - 1];
      if (row !== lastRow) [lastRow, aliveAt] = [row, Date.now()];
      const heard = Math.max(aliveAt, get().working?.at ?? 0);
      const limit = get().phase === 'configuring' ? CONFIGURE_HANG_MS : HANG_MS;
      if (Date.now() - heard > limit) {
        workerFailed(`The trainer stopped responding: no answer for ${Math.round((Date.now() - heard) / 1000)} s.`);
        return;
      }
      if (waiting) return;
      waiting = true;
      call((t) => t.ping()).then(
        () => {
          waiting = false;
          aliveAt = Date.now();
        },
        () => {
          waiting = false;
        },
      );
    }, PING_EVERY_MS);
  }

  function stopHeartbeat(): void {
    if (heartbeat !== null) clearInterval(heartbeat);
    heartbeat = null;
  }

  /** Starts the worker's loop (the caller holds the queue); the run ends by itself or on pause. */
  function launch(untilIter: number | undefined): void {
    const epoch = get().metricsEpoch;
    const onMetrics = metricsCallback((rows) => get().appendMetrics(rows, epoch));
    set({ phase: 'running', runUntil: untilIter ?? null });
    const mine = call((t) => t.start(onMetrics, untilIter, get().speedDelayMs))
      .catch((e: unknown) => {
        if (!(e instanceof WorkerGone)) set({ error: errorText(e) });
      })
      .finally(() => {
        // A run of a worker that already failed settles never, or after a restart: ignore it.
        if (runPromise !== mine) return;
        get().flushMetrics();
        runPromise = null;
        set(restarting ? { runUntil: null } : { phase: 'idle', runUntil: null });
      });
    runPromise = mine;
  }

  /**
   * A settings change on a run that has iterations: carried into the run from the next iteration
   * (marked on the charts) when the model's shape and the task stay; otherwise a reset, said so.
   */
  const applyOrReconfigure = async () => {
    if (!reconfigureWanted) return;
    const live = get().configured && !get().imported && configuredBackend === get().backend && lastShownIter() > 0;
    if (!live) return ensureConfigured();
    const wasRunning = runPromise !== null && get().phase === 'running';
    const until = get().runUntil;
    if (wasRunning) {
      restarting = true;
      try {
        await call((t) => t.pause());
        await Promise.race([runPromise, gone.promise]);
      } finally {
        restarting = false;
      }
    }
    const r = await call<Awaited<ReturnType<TrainerApi['applyConfig']>>>((t) => t.applyConfig(get().config));
    if (!r.applied) {
      set({ notice: `Settings changed: ${r.reason}, so the run was reset.` });
      if (wasRunning) set({ phase: 'idle' });
      return ensureConfigured();
    }
    reconfigureWanted = false;
    // A restart from here on replays under the new settings from the weights they started from.
    snapshots = [r.snapshot];
    snapshotFloor = r.snapshot.iter;
    set({ configPending: false });
    const at = lastShownIter() + 1;
    get().addMarker({ iter: at, kind: 'config', label: 'settings changed' });
    if (wasRunning && (until === null || lastShownIter() < until)) launch(until ?? undefined);
    else set({ phase: 'idle' });
  };

  /** True (and the link held) when the config's run is past what a link may start unasked. */
  const holdCostlyLink = async (): Promise<boolean> => {
    const cost = await call((t) => t.estimateCost(get().config));
    if (cost.cpuSecondsPerIter <= LINK_ASK_SECONDS && cost.bytes <= LINK_ASK_BYTES) return false;
    set({ linkGate: { cost, step: get().linkStep }, configured: false, phase: 'idle' });
    return true;
  };

  const ensureConfigured = async () => {
    if (reconfigureTimer !== null) clearTimeout(reconfigureTimer);
    reconfigureTimer = null;
    // A held link is built only on the user's word (answerLinkGate).
    if (get().linkGate) return;
    if (reconfigureWanted || !get().configured) await configureNow();
  };

  return {
    phase: 'configuring',
    linkGate: null,
    speedDelayMs: 0,
    runUntil: null,
    configured: false,
    backendInfo: null,
    error: null,
    notice: null,
    failure: null,
    working: null,
    pretrain: null,
    configPending: false,

    init() {
      if (initialized) return;
      initialized = true;
      setWorkerErrorHandler((message) => workerFailed(`The trainer crashed: ${message}`));
      startHeartbeat();
      void enqueue(async () => {
        if (!(await holdCostlyLink())) await configureNow();
      });
      const step = get().linkStep;
      if (step !== null && step > 0) void get().start(step);
    },

    requestReconfigure(delayMs = RECONFIGURE_DEBOUNCE_MS) {
      reconfigureWanted = true;
      set({ configPending: true });
      if (reconfigureTimer !== null) clearTimeout(reconfigureTimer);
      reconfigureTimer = setTimeout(() => {
        reconfigureTimer = null;
        void enqueue(applyOrReconfigure);
      }, delayMs);
    },

    answerLinkGate(build) {
      const gate = get().linkGate;
      if (!gate) return;
      set({ linkGate: null });
      if (!build) return set({ linkStep: null });
      void enqueue(configureNow);
      if (gate.step !== null && gate.step > 0) void get().start(gate.step);
    },

    start: (untilIter?: number) =>
      enqueue(async () => {
        if (runPromise || get().imported || get().linkGate) return;
        await ensureConfigured();
        if (!get().configured) return;
        set({ error: null });
        launch(untilIter);
      }),

    setSpeed(delayMs) {
      set({ speedDelayMs: Math.max(0, delayMs) });
      void enqueue(async () => {
        if (!runPromise || get().phase !== 'running') return;
        const until = get().runUntil;
        restarting = true;
        try {
          await call((t) => t.pause());
          await Promise.race([runPromise, gone.promise]);
        } finally {
          restarting = false;
        }
        if (until !== null && lastShownIter() >= until) return set({ phase: 'idle' });
        launch(until ?? undefined);
      });
    },

    pause: () => enqueue(stopRun),

    step: () =>
      enqueue(async () => {
        if (runPromise || get().imported || get().linkGate) return;
        await ensureConfigured();
        if (!get().configured) return;
        set({ phase: 'stepping' });
        try {
          const row = await call((t) => t.step());
          get().appendMetrics([row], get().metricsEpoch);
          get().flushMetrics();
        } finally {
          set({ phase: 'idle' });
        }
      }),

    stepThrough: () =>
      enqueue(async () => {
        if (runPromise || get().imported || get().linkGate) return;
        await ensureConfigured();
        if (!get().configured) return;
        set({ phase: 'stepping' });
        try {
          const { row, packs } = await call((t) => t.stepThrough());
          const dumps = await Promise.all(packs.map((p) => unpackBatchInSlices(p)));
          const live = liveIteration(dumps);
          get().appendMetrics([row], get().metricsEpoch);
          get().flushMetrics();
          // The first stage's batch before anything draws: no view loads the final one meanwhile.
          useExplainStore.getState().startLive(live);
          set({ batch: dumpAt(live, 0), batchEpoch: get().metricsEpoch });
        } finally {
          set({ phase: 'idle' });
        }
      }),

    reset: () =>
      enqueue(async () => {
        await stopRun();
        if (get().imported) return;
        set({ linkStep: null });
        if (reconfigureWanted || !get().configured) return ensureConfigured();
        set({ phase: 'resetting' });
        get().clearMetrics();
        snapshots = [];
        snapshotFloor = 0;
        try {
          await call((t) => t.reset());
        } finally {
          set({ phase: 'idle' });
        }
      }),

    dismissError: () => set({ error: null }),
    dismissNotice: () => set({ notice: null }),

    restartWorker: () =>
      enqueue(async () => {
        const failure = get().failure;
        if (!failure) return;
        set({ failure: null, phase: 'configuring' });
        try {
          const from = snapshotAtOrBefore(failure.lastIter);
          const resume = { ...(from ? { snapshot: from } : {}), replayTo: failure.lastIter };
          startHeartbeat();
          await call((t) => t.subscribe(eventsCallback(onEvent)));
          const info = await call((t) => t.configure(get().config, get().backend, resume));
          set({ backendInfo: info, configured: true });
          get().addMarker({ iter: failure.lastIter + 1, kind: 'restart', label: 'worker restarted' });
        } finally {
          set({ phase: 'idle' });
        }
      }),

    applyLink(link, initial) {
      set({
        config: link.config,
        backend: link.backend ?? 'auto',
        hidden: link.hide ?? [],
        focus: link.focus ?? null,
        linkStep: link.step ?? null,
        linkProblems: link.errors,
        linkMigratedFrom: link.migratedFrom ?? null,
        configError: null,
        lesson: link.lesson ?? null,
        presenter: link.present === true && link.lesson !== undefined,
      });
      if (initial) return;
      void enqueue(async () => {
        await stopRun();
        if (get().imported) {
          beforeImport = null;
          set({ imported: null });
        }
        if (!(await holdCostlyLink())) await configureNow();
      });
      if (link.step !== undefined && link.step > 0) void get().start(link.step);
    },

    loadBatch: () =>
      enqueue(async () => {
        if (runPromise || get().imported || !get().configured) return;
        const epoch = get().metricsEpoch;
        const pack = await call((t) => t.packBatch());
        const batch = pack && (await unpackBatchInSlices(pack));
        if (epoch === get().metricsEpoch) set({ batch, batchEpoch: epoch });
      }),

    async batchJson() {
      let blob: Blob | null = null;
      let failed: unknown = null;
      await enqueue(async () => {
        if (runPromise || get().imported || !get().configured) return;
        try {
          blob = await call((t) => t.batchJson());
        } catch (e) {
          failed = e;
        }
      });
      if (failed instanceof WorkerGone) throw new Error('the trainer stopped (see the notice to restart it)');
      if (failed) throw failed;
      return blob;
    },

    async importRun(file, fileName) {
      // A playground run file, or a verl / TRL / W&B metric log shown under the page's config. Text is
      // read here; the page's Import reads its file in a worker (app/runFileClient.ts).
      const parsed = typeof file === 'string' ? readImport(file, get().config, fileName) : file;
      if (!parsed.ok) {
        set({ importErrors: { fileName, errors: parsed.errors } });
        return false;
      }
      const { run, log } = parsed;
      await enqueue(async () => {
        await stopRun();
        if (reconfigureTimer !== null) clearTimeout(reconfigureTimer);
        reconfigureTimer = null;
        if (!get().imported) beforeImport = { config: get().config, backend: get().backend };
        get().clearMetrics();
        get().loadRows(run.metrics);
        const epoch = get().metricsEpoch;
        set({
          imported: { fileName, run, log },
          importErrors: null,
          batch: run.batch,
          batchEpoch: epoch,
          config: run.config,
          notes: run.notes,
          focus: null,
          linkStep: null,
          configError: null,
        });
        get().rescanAlarms();
      });
      return true;
    },

    closeImported: (keepConfig) =>
      enqueue(async () => {
        if (!get().imported) return;
        const back = keepConfig ? null : beforeImport;
        beforeImport = null;
        set({ imported: null, focus: null, ...(back ?? {}) });
        await configureNow();
      }),
  };
};
