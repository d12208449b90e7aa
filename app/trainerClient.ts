/**
 * The one place that creates a trainer worker and wraps it with Comlink. The engine runs in the
 * worker; only plain data (RunConfig, MetricRow, BackendInfo) crosses. Types only are imported from
 * workers/, so no engine code enters the main bundle. Everything that keeps a worker alive (its
 * calls, heartbeat, failure and restart) is a trainer session (./trainerSession.ts).
 */
import { proxy, releaseProxy, wrap, type Remote } from 'comlink';
import type { TrainerApi, TrainerEvent } from '../workers/entry/api';
import type { MetricRow } from '../workers/core/metrics';

export type Trainer = Remote<TrainerApi>;

/** A trainer in a worker of its own. */
export interface TrainerClient {
  trainer: Trainer;
  /** Terminates at once (a crashed or hung worker): calls still waiting never settle. */
  kill(): void;
  /** Ends the worker with no word and keeps the proxy, as an out-of-memory kill does (fault tests). */
  terminate(): void;
}

/** A worker started before anyone asked for it (prespawnTrainers), with what it said meanwhile. */
interface Spare {
  w: Worker;
  t: Trainer;
  /** The first error it raised before it was taken, if any. */
  early: string | null;
  onError: ((message: string) => void) | null;
  /** Settles its part of trainersReady (its ping answered, or it was ended unused). */
  settle: () => void;
}

let spares: Spare[] = [];
/** Settles once every prespawned worker has run its script (or failed to). */
let prespawned: Promise<void> = Promise.resolve();

function startWorker(): Spare {
  const w = new Worker(new URL('../workers/entry/trainer.worker.ts', import.meta.url), { type: 'module' });
  const spare: Spare = { w, t: wrap<TrainerApi>(w), early: null, onError: null, settle: () => {} };
  const report = (message: string) => {
    if (spare.onError) spare.onError(message);
    else spare.early ??= message;
  };
  w.addEventListener('error', (e) => {
    e.preventDefault();
    spare.settle();
    report(e.message || 'the worker script failed to load');
  });
  w.addEventListener('messageerror', () => {
    report('Trainer worker sent a message that could not be read.');
  });
  return spare;
}

/**
 * Starts `n` trainer workers now for spawnTrainer to hand out (app/boot.ts: before the app's own
 * modules are evaluated, so that each loads its script meanwhile). Those nobody has taken by the
 * page's next task are ended.
 */
export function prespawnTrainers(n: number): void {
  const started: Spare[] = [];
  for (let i = 0; i < n; i++) started.push(startWorker());
  spares.push(...started);
  // A ping's answer comes only after the worker has run its script and the calls queued for it
  // have been handed over (the ping first among them).
  prespawned = Promise.all(
    started.map(
      (spare) =>
        new Promise<void>((resolve) => {
          spare.settle = resolve;
          spare.t.ping().then(() => resolve(), () => resolve());
        }),
    ),
  ).then(() => {});
  setTimeout(() => {
    for (const s of spares) {
      s.settle();
      s.t[releaseProxy]();
      s.w.terminate();
    }
    spares = [];
  }, 0);
}

/**
 * Settles when the prespawned workers have run their scripts and taken the calls sent to them so
 * far, or after `ms`. Calls sent to a worker before its script has run wait in the page's thread,
 * which hands them over in a task of its own: a page that draws itself first (half a second of
 * one task on a quiet 2-core machine) holds them that long.
 */
export function trainersReady(ms: number): Promise<void> {
  return Promise.race([prespawned, new Promise<void>((resolve) => setTimeout(resolve, ms))]);
}

/** A new trainer worker (a prespawned one while any is left), wrapped; `onError` hears what it raises outside a call. */
export function spawnTrainer(onError: (message: string) => void): TrainerClient {
  const spare = spares.shift() ?? startWorker();
  spare.onError = onError;
  if (spare.early !== null) {
    const message = spare.early;
    queueMicrotask(() => onError(message));
  }
  const { w, t } = spare;
  return {
    trainer: t,
    kill() {
      t[releaseProxy]();
      w.terminate();
    },
    terminate: () => w.terminate(),
  };
}

/** Wraps an event callback (snapshots, lost devices, NaN) for the worker. */
export function eventsCallback(fn: (e: TrainerEvent) => void): (e: TrainerEvent) => void {
  return proxy(fn);
}

/** Wraps a metrics callback so the worker can call it across the thread boundary. */
export function metricsCallback(fn: (rows: MetricRow[]) => void): (rows: MetricRow[]) => void {
  return proxy(fn);
}

/** Wraps a progress callback (a lesson seed's iterations) for the worker. */
export function progressCallback(fn: (iter: number) => void): (iter: number) => void {
  return proxy(fn);
}
