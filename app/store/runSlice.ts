/**
 * The run: backend, phase and errors. These actions are the only place the UI talks to the page's
 * trainer (the main trainer session, app/trainerSession.ts, which owns the worker, its heartbeat
 * and its snapshots). Worker calls go through one queue so configure / start / pause / step / reset
 * never interleave; `start` only kicks the run off, so the queue stays free for `pause`. Config
 * edits reconfigure the trainer after a short debounce (Reset semantics); Start, Step and Reset
 * flush a pending one first.
 */
import type { StateCreator } from 'zustand';
import type { BackendInfo, PretrainSummary, TrainerApi, TrainerEvent } from '../../workers/entry/api';
import type { RunCost } from '../../workers/core/runCost';
import type { RunConfig } from '../../workers/core/config';
import { readImport, unpackBatchInSlices, type ImportRead } from '../../workers/meta';
import type { DecodedLink } from '../../workers/content/shareLink';
import type { FrameworkExport } from '../../workers/formats/frameworkExport';
import type { Framework } from '../../workers/formats/frameworkNames';
import { CONFIGURE_HANG_MS, hangLimitMs, mainSession, watchMainSession, WorkerGone } from '../trainerSession';
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
  /**
   * The config the worker's run, and so every row in `series`, was built from (the very object);
   * null while none is. Until it is `config` again after an edit or a link, the rows on screen are
   * another config's: a lesson line must not be measured from them.
   */
  seriesConfig: RunConfig | null;
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
  /** True from a config change until the worker holds a run of that config. */
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
  /** Re-scores the last batch under each method set (the batch lab), in the queue; null while a run is on. */
  rescore(methodSets: string[][]): Promise<Awaited<ReturnType<TrainerApi['rescore']>> | null>;
  /** `config` in a framework's option names, written by the worker (outside the queue: it reads no run). */
  frameworkExport(config: RunConfig, framework: Framework): Promise<FrameworkExport>;
  /** `config`'s recipe as a zipped folder, written by the worker (outside the queue: it reads no run). */
  recipeZip(config: RunConfig, episodes: number): Promise<Awaited<ReturnType<TrainerApi['recipeZip']>>>;
  /** Shows a run file's metrics without re-running; false (with importErrors set) if it is bad. */
  importRun(file: string | ImportRead, fileName: string): Promise<boolean>;
  /** Leaves an imported run: back to the previous config, or (`keepConfig`) live with its config. */
  closeImported(keepConfig: boolean): Promise<void>;
}

/** 250 ms: typing "128" into a field reconfigures once, not three times. */
const RECONFIGURE_DEBOUNCE_MS = 250;

type SetState = Parameters<StateCreator<AppState, [], [], RunSlice>>[0];
type GetState = () => AppState;

/** What the run's actions share outside React state (one per store). */
interface RunControl {
  set: SetState;
  get: GetState;
  /** The tail of the worker-call queue. */
  chain: Promise<void>;
  reconfigureTimer: ReturnType<typeof setTimeout> | null;
  reconfigureWanted: boolean;
  /** The worker's training loop while one runs. */
  runPromise: Promise<void> | null;
  /** Set while a pace or settings change restarts the run, so its end does not flash "idle". */
  restarting: boolean;
  /** The backend choice the worker's run was built with: another choice needs a full rebuild. */
  configuredBackend: string | null;
  initialized: boolean;
  /** The config and backend before an import, restored when the imported run is closed. */
  beforeImport: Pick<AppState, 'config' | 'backend'> | null;
}

// PLUMBING: the queue, and the iteration on screen.

/** Runs `op` after every queued call; a failure becomes the error alert (a gone worker has its own notice). */
function enqueue(c: RunControl, op: () => Promise<void>): Promise<void> {
  const p = c.chain.then(op).catch((e: unknown) => {
    if (!(e instanceof WorkerGone)) c.set({ error: errorText(e) });
  });
  c.chain = p;
  return p;
}

function lastShownIter(c: RunControl): number {
  c.get().flushMetrics();
  const s = c.get().series;
  return s[s.length - 1]?.iter ?? 0;
}

// THE TRAINING LOOP: start it, stop it, restart it at a new pace or with new settings.

/** Starts the worker's loop (the caller holds the queue); the run ends by itself or on pause. */
function launch(c: RunControl, untilIter: number | undefined): void {
  const { set, get } = c;
  const epoch = get().metricsEpoch;
  const onMetrics = mainSession.metrics((rows) => get().appendMetrics(rows, epoch));
  set({ phase: 'running', runUntil: untilIter ?? null });
  const mine = mainSession
    .call((t) => t.start(onMetrics, untilIter, get().speedDelayMs))
    .catch((e: unknown) => {
      if (!(e instanceof WorkerGone)) set({ error: errorText(e) });
    })
    .finally(() => {
      // A run of a worker that already failed settles never, or after a restart: ignore it.
      if (c.runPromise !== mine) return;
      get().flushMetrics();
      c.runPromise = null;
      set(c.restarting ? { runUntil: null } : { phase: 'idle', runUntil: null });
    });
  c.runPromise = mine;
}

async function stopRun(c: RunControl): Promise<void> {
  if (!c.runPromise) return;
  c.set({ phase: 'pausing' });
  await mainSession.call((t) => t.pause());
  await mainSession.call(() => c.runPromise!);
}

/** Pauses a running loop so it can be launched again (new pace, new settings) without flashing "idle". */
async function pauseToRelaunch(c: RunControl): Promise<void> {
  c.restarting = true;
  try {
    await mainSession.call((t) => t.pause());
    if (c.runPromise) await mainSession.call(() => c.runPromise!);
  } finally {
    c.restarting = false;
  }
}

// BUILDING THE RUN: from the config, after an edit, from a link that may cost too much.

function onEvent(c: RunControl, e: TrainerEvent): void {
  const { set, get } = c;
  if (e.type === 'pretrain') {
    set({ pretrain: { done: e.done, steps: e.steps, ...(e.start ? { start: e.start } : {}) } });
  } else if (e.type === 'working') {
    const now = Date.now();
    const w = get().working;
    set({ working: w?.iter === e.iter ? { ...w, at: now } : { iter: e.iter, since: now, at: now } });
  } else if (e.type === 'snapshot') {
    mainSession.keepSnapshot(e.snapshot);
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

async function configureNow(c: RunControl): Promise<void> {
  const { set, get } = c;
  c.reconfigureWanted = false;
  await stopRun(c);
  // Start, Step or a settings change after the worker died builds the run on a new worker: the
  // notice about the dead one goes, and the new one is watched as the first was.
  if (get().failure) {
    set({ failure: null });
    mainSession.watch();
  }
  set({ phase: 'configuring', working: null, pretrain: null, seriesConfig: null });
  get().clearMetrics();
  mainSession.resetSnapshots();
  const config = get().config;
  try {
    // Subscribed first: a long configure (a restart's replay, a pretrained start) sends events the heartbeat hears.
    await mainSession.call((t) => t.subscribe(mainSession.events((e) => onEvent(c, e))));
    const info = await mainSession.call((t) => t.configure(config, get().backend));
    c.configuredBackend = get().backend;
    set({ backendInfo: info, configured: true, configPending: c.reconfigureWanted, seriesConfig: config });
  } catch (e) {
    set({ backendInfo: null, configured: false });
    throw e;
  } finally {
    set({ phase: 'idle' });
  }
}

/** True (and the link held) when the config's run is past what a link may start unasked. */
async function holdCostlyLink(c: RunControl): Promise<boolean> {
  const { set, get } = c;
  const cost = await mainSession.call((t) => t.estimateCost(get().config));
  if (cost.cpuSecondsPerIter <= LINK_ASK_SECONDS && cost.bytes <= LINK_ASK_BYTES) return false;
  set({ linkGate: { cost, step: get().linkStep }, configured: false, phase: 'idle' });
  return true;
}

async function ensureConfigured(c: RunControl): Promise<void> {
  if (c.reconfigureTimer !== null) clearTimeout(c.reconfigureTimer);
  c.reconfigureTimer = null;
  // A held link is built only on the user's word (answerLinkGate).
  if (c.get().linkGate) return;
  if (c.reconfigureWanted || !c.get().configured) await configureNow(c);
}

/**
 * A settings change on a run that has iterations: carried into the run from the next iteration
 * (marked on the charts) when the model's shape and the task stay; otherwise a reset, said so.
 */
async function applyOrReconfigure(c: RunControl): Promise<void> {
  const { set, get } = c;
  if (!c.reconfigureWanted) return;
  const live = get().configured && !get().imported && c.configuredBackend === get().backend && lastShownIter(c) > 0;
  if (!live) return ensureConfigured(c);
  const wasRunning = c.runPromise !== null && get().phase === 'running';
  const until = get().runUntil;
  if (wasRunning) await pauseToRelaunch(c);
  const config = get().config;
  const r = await mainSession.call<Awaited<ReturnType<TrainerApi['applyConfig']>>>((t) => t.applyConfig(config));
  if (!r.applied) {
    set({ notice: `Settings changed: ${r.reason}, so the run was reset.` });
    if (wasRunning) set({ phase: 'idle' });
    return ensureConfigured(c);
  }
  c.reconfigureWanted = false;
  // A restart from here on replays under the new settings from the weights they started from.
  mainSession.resetSnapshots(r.snapshot);
  set({ configPending: false, seriesConfig: config });
  const at = lastShownIter(c) + 1;
  get().addMarker({ iter: at, kind: 'config', label: 'settings changed' });
  if (wasRunning && (until === null || lastShownIter(c) < until)) launch(c, until ?? undefined);
  else set({ phase: 'idle' });
}

// FAILURE AND RESTART

/** The worker is gone: drop every call waiting on it, keep the charts, offer a restart. */
function workerFailed(c: RunControl, message: string): void {
  const { set, get } = c;
  if (get().failure) return;
  c.chain = Promise.resolve();
  c.runPromise = null;
  c.reconfigureWanted = false;
  const lastIter = lastShownIter(c);
  set((s) => ({
    failure: { message: message.charAt(0).toUpperCase() + message.slice(1), lastIter, snapshotIter: mainSession.resumeFrom(lastIter).snapshot?.iter ?? 0 },
    phase: 'idle',
    configured: false,
    // Rows the dead worker had already posted are dropped; the series keeps what was shown.
    metricsEpoch: s.metricsEpoch + 1,
    // An imported run's batch is the file's, not the worker's: it stays on screen.
    ...(s.imported && s.batchEpoch === s.metricsEpoch ? { batchEpoch: s.metricsEpoch + 1 } : {}),
  }));
}

async function restartWorker(c: RunControl): Promise<void> {
  const { set, get } = c;
  const failure = get().failure;
  if (!failure) return;
  set({ failure: null, phase: 'configuring' });
  try {
    mainSession.watch();
    await mainSession.call((t) => t.subscribe(mainSession.events((e) => onEvent(c, e))));
    const info = await mainSession.call((t) => t.configure(get().config, get().backend, mainSession.resumeFrom(failure.lastIter)));
    set({ backendInfo: info, configured: true });
    get().addMarker({ iter: failure.lastIter + 1, kind: 'restart', label: 'worker restarted' });
  } finally {
    set({ phase: 'idle' });
  }
}

// LINKS AND IMPORTED RUNS

function applyLink(c: RunControl, link: DecodedLink, initial: boolean): void {
  const { set, get } = c;
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
  void enqueue(c, async () => {
    await stopRun(c);
    if (get().imported) {
      c.beforeImport = null;
      set({ imported: null });
    }
    // The link is being built from here: while the worker is asked what it costs (an answer that
    // waits behind a lesson seed's iteration) the page must not read as idle, or Next and Previous
    // are offered for a moment and then taken back.
    set({ phase: 'configuring' });
    try {
      if (!(await holdCostlyLink(c))) await configureNow(c);
    } finally {
      if (get().phase === 'configuring') set({ phase: 'idle' });
    }
  });
  if (link.step !== undefined && link.step > 0) void get().start(link.step);
}

async function importRun(c: RunControl, file: string | ImportRead, fileName: string): Promise<boolean> {
  const { set, get } = c;
  // A playground run file, or a verl / TRL / W&B metric log shown under the page's config. Text is
  // read here; the page's Import reads its file in a worker (app/runFileClient.ts).
  const parsed = typeof file === 'string' ? readImport(file, get().config, fileName) : file;
  if (!parsed.ok) {
    set({ importErrors: { fileName, errors: parsed.errors } });
    return false;
  }
  const { run, log } = parsed;
  await enqueue(c, async () => {
    await stopRun(c);
    if (c.reconfigureTimer !== null) clearTimeout(c.reconfigureTimer);
    c.reconfigureTimer = null;
    if (!get().imported) c.beforeImport = { config: get().config, backend: get().backend };
    get().clearMetrics();
    get().loadRows(run.metrics);
    const epoch = get().metricsEpoch;
    set({
      imported: { fileName, run, log },
      importErrors: null,
      batch: run.batch,
      batchEpoch: epoch,
      config: run.config,
      seriesConfig: null,
      notes: run.notes,
      focus: null,
      linkStep: null,
      configError: null,
    });
    get().rescanAlarms();
  });
  return true;
}

export const createRunSlice: StateCreator<AppState, [], [], RunSlice> = (set, get) => {
  const c: RunControl = {
    set,
    get,
    chain: Promise.resolve(),
    reconfigureTimer: null,
    reconfigureWanted: false,
    runPromise: null,
    restarting: false,
    configuredBackend: null,
    initialized: false,
    beforeImport: null,
  };
  /** Whether the worker is free for a call outside the run (an export, a re-score). */
  const freeForCalls = () => !c.runPromise && !get().imported && get().configured;

  return {
    phase: 'configuring',
    linkGate: null,
    speedDelayMs: 0,
    runUntil: null,
    configured: false,
    seriesConfig: null,
    backendInfo: null,
    error: null,
    notice: null,
    failure: null,
    working: null,
    pretrain: null,
    configPending: false,

    init() {
      if (c.initialized) return;
      c.initialized = true;
      watchMainSession(
        (message) => workerFailed(c, message),
        () => (get().phase === 'configuring' ? CONFIGURE_HANG_MS : hangLimitMs()),
      );
      void enqueue(c, async () => {
        if (!(await holdCostlyLink(c))) await configureNow(c);
      });
      const step = get().linkStep;
      if (step !== null && step > 0) void get().start(step);
    },

    requestReconfigure(delayMs = RECONFIGURE_DEBOUNCE_MS) {
      c.reconfigureWanted = true;
      set({ configPending: true });
      if (c.reconfigureTimer !== null) clearTimeout(c.reconfigureTimer);
      c.reconfigureTimer = setTimeout(() => {
        c.reconfigureTimer = null;
        void enqueue(c, () => applyOrReconfigure(c));
      }, delayMs);
    },

    answerLinkGate(build) {
      const gate = get().linkGate;
      if (!gate) return;
      set({ linkGate: null });
      if (!build) return set({ linkStep: null });
      void enqueue(c, () => configureNow(c));
      if (gate.step !== null && gate.step > 0) void get().start(gate.step);
    },

    start: (untilIter?: number) =>
      enqueue(c, async () => {
        if (c.runPromise || get().imported || get().linkGate) return;
        await ensureConfigured(c);
        if (!get().configured) return;
        set({ error: null });
        launch(c, untilIter);
      }),

    setSpeed(delayMs) {
      set({ speedDelayMs: Math.max(0, delayMs) });
      void enqueue(c, async () => {
        if (!c.runPromise || get().phase !== 'running') return;
        const until = get().runUntil;
        await pauseToRelaunch(c);
        if (until !== null && lastShownIter(c) >= until) return set({ phase: 'idle' });
        launch(c, until ?? undefined);
      });
    },

    pause: () => enqueue(c, () => stopRun(c)),

    step: () =>
      enqueue(c, async () => {
        if (c.runPromise || get().imported || get().linkGate) return;
        await ensureConfigured(c);
        if (!get().configured) return;
        set({ phase: 'stepping' });
        try {
          const row = await mainSession.call((t) => t.step());
          get().appendMetrics([row], get().metricsEpoch);
          get().flushMetrics();
        } finally {
          set({ phase: 'idle' });
        }
      }),

    stepThrough: () =>
      enqueue(c, async () => {
        if (c.runPromise || get().imported || get().linkGate) return;
        await ensureConfigured(c);
        if (!get().configured) return;
        set({ phase: 'stepping' });
        try {
          const { row, packs } = await mainSession.call((t) => t.stepThrough());
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
      enqueue(c, async () => {
        await stopRun(c);
        if (get().imported) return;
        set({ linkStep: null });
        if (c.reconfigureWanted || !get().configured) return ensureConfigured(c);
        set({ phase: 'resetting' });
        get().clearMetrics();
        mainSession.resetSnapshots();
        try {
          await mainSession.call((t) => t.reset());
        } finally {
          set({ phase: 'idle' });
        }
      }),

    dismissError: () => set({ error: null }),
    dismissNotice: () => set({ notice: null }),
    restartWorker: () => enqueue(c, () => restartWorker(c)),
    applyLink: (link, initial) => applyLink(c, link, initial),

    loadBatch: () =>
      enqueue(c, async () => {
        if (!freeForCalls()) return;
        const epoch = get().metricsEpoch;
        const pack = await mainSession.call((t) => t.packBatch());
        const batch = pack && (await unpackBatchInSlices(pack));
        if (epoch === get().metricsEpoch) set({ batch, batchEpoch: epoch });
      }),

    async batchJson() {
      let blob: Blob | null = null;
      let failed: unknown = null;
      await enqueue(c, async () => {
        if (!freeForCalls()) return;
        try {
          blob = await mainSession.call((t) => t.batchJson());
        } catch (e) {
          failed = e;
        }
      });
      if (failed instanceof WorkerGone) throw new Error('the trainer stopped (see the notice to restart it)');
      if (failed) throw failed;
      return blob;
    },

    async rescore(methodSets) {
      let out: Awaited<ReturnType<TrainerApi['rescore']>> | null = null;
      let failed: unknown = null;
      await enqueue(c, async () => {
        if (!freeForCalls()) return;
        try {
          out = await mainSession.call((t) => t.rescore(methodSets));
        } catch (e) {
          failed = e;
        }
      });
      if (failed instanceof WorkerGone) throw new Error('the trainer stopped (see the notice to restart it)');
      if (failed) throw failed;
      return out;
    },

    frameworkExport: (config, framework) => mainSession.call((t) => t.frameworkExport(config, framework)),
    recipeZip: (config, episodes) => mainSession.call((t) => t.recipeZip(config, episodes)),
    importRun: (file, fileName) => importRun(c, file, fileName),

    closeImported: (keepConfig) =>
      enqueue(c, async () => {
        if (!get().imported) return;
        const back = keepConfig ? null : c.beforeImport;
        c.beforeImport = null;
        set({ imported: null, focus: null, ...(back ?? {}) });
        await configureNow(c);
      }),
  };
};
