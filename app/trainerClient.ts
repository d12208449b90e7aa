/**
 * The one place that creates the trainer worker and wraps it with Comlink. The engine runs in the
 * worker; only plain data (RunConfig, MetricRow, BackendInfo) crosses. Types only are imported from
 * workers/, so no engine code enters the main bundle.
 */
import { proxy, releaseProxy, wrap, type Remote } from 'comlink';
import type { PageFault, TrainerApi, TrainerEvent } from '../workers/entry/api';
import type { MetricRow } from '../workers/core/metrics';

export type Trainer = Remote<TrainerApi>;

let worker: Worker | null = null;
let trainer: Trainer | null = null;
let onWorkerError: ((message: string) => void) | null = null;

/** Receives errors the worker raises outside a call (failed script load, uncaught exceptions). */
export function setWorkerErrorHandler(fn: ((message: string) => void) | null): void {
  onWorkerError = fn;
}

/** A new trainer worker, wrapped; `onError` hears what it raises outside a call. */
function spawnWorker(onError: (message: string) => void): { worker: Worker; trainer: Trainer } {
  const w = new Worker(new URL('../workers/entry/trainer.worker.ts', import.meta.url), { type: 'module' });
  w.addEventListener('error', (e) => {
    e.preventDefault();
    onError(e.message || 'the worker script failed to load');
  });
  w.addEventListener('messageerror', () => {
    onError('Trainer worker sent a message that could not be read.');
  });
  return { worker: w, trainer: wrap<TrainerApi>(w) };
}

/** The trainer proxy, creating the worker on first use. */
export function getTrainer(): Trainer {
  if (trainer) return trainer;
  const spawned = spawnWorker((message) => onWorkerError?.(message));
  worker = spawned.worker;
  trainer = spawned.trainer;
  return trainer;
}

/** The trainer proxy if a worker is running, without starting one. */
export function currentTrainer(): Trainer | null {
  return trainer;
}

/** A trainer in a worker of its own (the Compare view runs two beside the main one). */
export interface TrainerClient {
  trainer: Trainer;
  /** Terminates at once (a crashed or hung worker): calls still waiting never settle. */
  kill(): void;
}

export function createTrainerClient(onError: (message: string) => void): TrainerClient {
  const { worker: w, trainer: t } = spawnWorker(onError);
  return {
    trainer: t,
    kill() {
      t[releaseProxy]();
      w.terminate();
    },
  };
}

/** Wraps an event callback (snapshots, lost devices, NaN) for the worker. */
export function eventsCallback(fn: (e: TrainerEvent) => void): (e: TrainerEvent) => void {
  return proxy(fn);
}

/**
 * Terminates a crashed or hung worker at once (no dispose call: it would never answer). The next
 * getTrainer() starts a fresh one. Calls still waiting on the old worker never settle.
 */
export function killWorker(): void {
  const t = trainer;
  const w = worker;
  trainer = null;
  worker = null;
  if (t) t[releaseProxy]();
  w?.terminate();
}

declare global {
  interface Window {
    /**
     * Reliability tests provoke faults through this (a NaN, a lost device, a crash, a hang, a silent
     * end of the worker). Test builds only (vitest, `vite build --mode e2e`): vite replaces
     * import.meta.env.MODE at build time, so a production bundle has neither the hook nor its name.
     */
    __playgroundDebug?: (fault: PageFault, ms?: number) => Promise<void>;
  }
}
if (import.meta.env.MODE !== 'production' && typeof window !== 'undefined') {
  window.__playgroundDebug = async (fault, ms) => {
    // An out-of-memory kill: the worker ends with no error event; the page must notice on its own.
    if (fault === 'terminate') return void worker?.terminate();
    return getTrainer().debug(fault, ms);
  };
}

/** Wraps a metrics callback so the worker can call it across the thread boundary. */
export function metricsCallback(fn: (rows: MetricRow[]) => void): (rows: MetricRow[]) => void {
  return proxy(fn);
}

/** Disposes the trainer and terminates the worker (App unmount, HMR). */
export async function disposeTrainer(): Promise<void> {
  const t = trainer;
  const w = worker;
  trainer = null;
  worker = null;
  if (!t || !w) return;
  try {
    await Promise.race([t.dispose(), new Promise((r) => setTimeout(r, 500))]);
  } catch {
    // The worker is terminated below either way.
  }
  t[releaseProxy]();
  w.terminate();
}
