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

/** A new trainer worker, wrapped; `onError` hears what it raises outside a call. */
export function spawnTrainer(onError: (message: string) => void): TrainerClient {
  const w = new Worker(new URL('../workers/entry/trainer.worker.ts', import.meta.url), { type: 'module' });
  w.addEventListener('error', (e) => {
    e.preventDefault();
    onError(e.message || 'the worker script failed to load');
  });
  w.addEventListener('messageerror', () => {
    onError('Trainer worker sent a message that could not be read.');
  });
  const t = wrap<TrainerApi>(w);
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
