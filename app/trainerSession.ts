/**
 * A trainer session: one trainer worker and what keeps it honest, for every store that trains (the
 * run on screen, Compare's two runs, the Arena's pool, the lesson's seed workers).
 *
 * - Calls made through `call` settle with the worker's answer or, when the worker crashes or hangs
 *   first, with WorkerGone: nothing waits on a dead worker forever.
 * - While watched, a heartbeat pings the worker every few seconds; metric rows and events count as
 *   signs of life too (a CPU iteration blocks the worker from answering pings, but it sends
 *   'working' events between its stages). Silence longer than `hangMs()` is a hang.
 * - A crash or hang ends the worker, rejects every waiting call and tells the owner once; the next
 *   call starts a fresh worker. Callbacks of the dead worker are ignored from then on.
 * - The run's last snapshots are kept, so a restart resumes in the fresh worker where the run
 *   stopped (`resumeFrom`).
 */
import type { PageFault, ResumeFrom, TrainerEvent } from '../workers/entry/api';
import type { MetricRow } from '../workers/core/metrics';
import type { TrainerSnapshot } from '../workers/core/trainer';
import { eventsCallback, metricsCallback, progressCallback, spawnTrainer, type Trainer, type TrainerClient } from './trainerClient';

/**
 * A worker that answers no ping and sends nothing for this long is declared hung, in every phase
 * (idle, stepping, exporting, pausing, running).
 */
export const HANG_MS = 15_000;
/** Building a run may compile GPU kernels one at a time, blocking the worker longer than an iteration does. */
export const CONFIGURE_HANG_MS = 60_000;

/**
 * The hang limit outside a build: HANG_MS, or in test builds a shorter one a reliability test sets
 * before the page loads (`window.__playgroundHangMs`), so that its "busy, not hung" and "hung" cases
 * need iterations and waits of seconds, not of fifteen. A production bundle has only HANG_MS.
 */
export function hangLimitMs(): number {
  if (import.meta.env.MODE !== 'production' && typeof window !== 'undefined' && window.__playgroundHangMs) return window.__playgroundHangMs;
  return HANG_MS;
}
const PING_EVERY_MS = 3_000;
/** Snapshots kept: a snapshot event can arrive before the metric rows of the iterations it covers. */
const SNAPSHOTS_KEPT = 3;

/** A call cut short because its worker crashed or hung: the owner's failure notice says so, not an error. */
export class WorkerGone extends Error {}

export interface SessionOptions {
  /** The worker crashed or hung ("the trainer crashed: ...", "the trainer stopped responding: ..."). */
  onFailure(message: string): void;
  /** Silence that means a hang, now (default hangLimitMs(): HANG_MS outside test builds). */
  hangMs?(): number;
}

export interface TrainerSession {
  /** A call to the worker (started on first use) that settles: its answer, or WorkerGone. */
  call<T>(fn: (t: Trainer) => Promise<T>): Promise<T>;
  /** True while a worker is running. */
  readonly live: boolean;
  /** An event callback for the worker: counts as a sign of life; ignored once this worker is gone. */
  events(fn: (e: TrainerEvent) => void): (e: TrainerEvent) => void;
  /** A metrics callback, likewise. */
  metrics(fn: (rows: MetricRow[]) => void): (rows: MetricRow[]) => void;
  /** A progress callback (iterations done), likewise. */
  progress(fn: (iter: number) => void): (iter: number) => void;
  /** Starts the heartbeat (idempotent); the silence is counted from now. */
  watch(): void;
  unwatch(): void;
  /** Ends the worker as failed: waiting calls reject, the owner hears `message` once. */
  fail(message: string): void;
  /** Ends the worker, not as a failure (a pool that is done, a lesson closed). */
  close(): void;
  /** A snapshot event of the run; older than the floor ones are refused. */
  keepSnapshot(s: TrainerSnapshot): void;
  /** A new run: no snapshots; with `from`, the run's settings changed there and older ones no longer apply. */
  resetSnapshots(from?: TrainerSnapshot): void;
  /** What a fresh worker resumes from to reach `iter`: the newest snapshot at or before it, then a replay. */
  resumeFrom(iter: number): ResumeFrom;
  /** Fault tests: the worker itself, if running. */
  readonly client: TrainerClient | null;
}

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

export function createTrainerSession(options: SessionOptions): TrainerSession {
  let client: TrainerClient | null = null;
  /** Bumped when a worker is ended: callbacks made for an older one are ignored. */
  let generation = 0;
  let gone = newGone();
  let heartbeat: ReturnType<typeof setInterval> | null = null;
  let heardAt = Date.now();
  let snapshots: TrainerSnapshot[] = [];
  let floor = 0;

  const heard = () => {
    heardAt = Date.now();
  };

  function ensure(): TrainerClient {
    if (client) return client;
    const gen = generation;
    client = spawnTrainer((message) => {
      if (gen === generation) fail(`the trainer crashed: ${message}`);
    });
    return client;
  }

  /** Ends the worker; the calls waiting on it reject with `why`. */
  function end(why: string): void {
    generation++;
    client?.kill();
    client = null;
    gone.reject(new WorkerGone(why));
    gone = newGone();
  }

  function fail(message: string): void {
    if (!client) return;
    unwatch();
    end(message);
    options.onFailure(message);
  }

  function unwatch(): void {
    if (heartbeat !== null) clearInterval(heartbeat);
    heartbeat = null;
  }

  function call<T>(fn: (t: Trainer) => Promise<T>): Promise<T> {
    return Promise.race([fn(ensure().trainer), gone.promise]);
  }

  /** A callback of the current worker, silenced once that worker is gone. */
  function mine<A extends unknown[]>(fn: (...a: A) => void): (...a: A) => void {
    const gen = generation;
    return (...a: A) => {
      if (gen !== generation) return;
      heard();
      fn(...a);
    };
  }

  return {
    call,
    get live() {
      return client !== null;
    },
    get client() {
      return client;
    },
    events: (fn) => eventsCallback(mine(fn)),
    metrics: (fn) => metricsCallback(mine(fn)),
    progress: (fn) => progressCallback(mine(fn)),
    watch() {
      if (heartbeat !== null) return;
      let waiting = false;
      heard();
      heartbeat = setInterval(() => {
        const silent = Date.now() - heardAt;
        if (client && silent > (options.hangMs?.() ?? hangLimitMs())) {
          fail(`the trainer stopped responding: no answer for ${Math.round(silent / 1000)} s.`);
          return;
        }
        if (waiting) return;
        waiting = true;
        call((t) => t.ping()).then(
          () => {
            waiting = false;
            heard();
          },
          () => {
            waiting = false;
          },
        );
      }, PING_EVERY_MS);
    },
    unwatch,
    fail,
    close() {
      unwatch();
      end('the trainer was closed');
    },
    keepSnapshot(s) {
      if (s.iter < floor) return;
      snapshots = [...snapshots, s].slice(-SNAPSHOTS_KEPT);
    },
    resetSnapshots(from) {
      snapshots = from ? [from] : [];
      floor = from?.iter ?? 0;
    },
    resumeFrom(iter) {
      let from: TrainerSnapshot | undefined;
      for (const s of snapshots) if (s.iter <= iter) from = s;
      return { ...(from ? { snapshot: from } : {}), replayTo: iter };
    },
  };
}

/** The page's own trainer: the run on screen, the batch lab's re-scores, and a lesson seed when idle. */
export const mainSession: TrainerSession = createTrainerSession({
  onFailure: (message) => mainFailure(message),
  hangMs: () => mainHangMs(),
});
let mainFailure: (message: string) => void = () => {};
let mainHangMs: () => number = () => HANG_MS;

/** The run slice says what a failure of the page's trainer means, and how long it may be silent. */
export function watchMainSession(onFailure: (message: string) => void, hangMs: () => number): void {
  mainFailure = onFailure;
  mainHangMs = hangMs;
  mainSession.watch();
}

declare global {
  interface Window {
    /**
     * Reliability tests provoke faults through this (a NaN, a lost device, a crash, a hang, a silent
     * end of the worker). Test builds only (vitest, `vite build --mode e2e`): vite replaces
     * import.meta.env.MODE at build time, so a production bundle has neither the hook nor its name.
     */
    __playgroundDebug?: (fault: PageFault, ms?: number) => Promise<void>;
    /** Test builds: the hang limit in ms in place of HANG_MS (hangLimitMs). */
    __playgroundHangMs?: number;
  }
}
if (import.meta.env.MODE !== 'production' && typeof window !== 'undefined') {
  window.__playgroundDebug = async (fault, ms) => {
    // An out-of-memory kill: the worker ends with no error event; the page must notice on its own.
    if (fault === 'terminate') return void mainSession.client?.terminate();
    return mainSession.call((t) => t.debug(fault, ms));
  };
}
