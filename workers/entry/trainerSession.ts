/**
 * What the worker's trainer API keeps between calls (the run's config, device, trainer, and the last
 * iteration reported) and how a run survives a lost GPU device: a new device, the last snapshot,
 * and a silent replay up to the last iteration already reported (runs are deterministic, so nothing
 * is lost or duplicated).
 */
import type { BackendInfo, TrainerEvent } from './api';
import type { Backend, RunShape } from '../core/backend';
import type { RunConfig } from '../core/config';
import { cpuBackendLabel, createCpuBackend } from '../core/cpuBackend';
import type { GpuHandle } from '../core/gpuDevice';
import type { MetricRow } from '../core/metrics';
import { createTrainer, NonFiniteError, type Trainer, type TrainerSnapshot } from '../core/trainer';

/** A rejected GPU call counts as a lost device if device.lost resolves within this time. */
const LOST_GRACE_MS = 2000;
/** Give up after this many device losses in a row without a completed iteration. */
const MAX_RECOVERIES = 3;
/** 'working' events during a blocking CPU iteration: this often at most (the page's ping every 3 s). */
const WORKING_EVERY_MS = 1000;
const PRETRAIN_PROGRESS_MS = 200;

type Factory = (shape: RunShape, params: Float32Array) => Backend | Promise<Backend>;

export interface Chosen {
  info: BackendInfo;
  gpu: GpuHandle | null;
}

export async function openGpu(gpu: GPU): Promise<GpuHandle> {
  const { requestGpu } = await import('../core/gpuDevice');
  return requestGpu(gpu);
}

export const cpuChoice = (reason: string): Chosen => ({
  info: { kind: 'cpu', label: cpuBackendLabel(), isFallbackAdapter: false, fallbackReason: reason },
  gpu: null,
});

export interface Session {
  readonly gpu: GPU | undefined;
  config: RunConfig | null;
  handle: GpuHandle | null;
  trainer: Trainer | null;
  running: boolean;
  loop: Promise<void> | null;
  /** The highest iteration whose metrics left the API. */
  lastEmitted: number;
  onEvent: ((e: TrainerEvent) => void) | null;
  /** Devices destroyed on purpose: their loss is not a fault. */
  readonly retired: WeakSet<GPUDevice>;
  /** When the last 'working' event went out. */
  lastWorking: number;
  /** Bumped by stopLessonSeeds: a lesson seed started under an older one stops at its next iteration. */
  seedGeneration: number;
}

export function createSession(gpu: GPU | undefined): Session {
  return { gpu, config: null, handle: null, trainer: null, running: false, loop: null, lastEmitted: 0, onEvent: null, retired: new WeakSet(), lastWorking: 0, seedGeneration: 0 };
}

const emit = (s: Session, e: TrainerEvent): void => s.onEvent?.(e);

export function requireTrainer(s: Session): Trainer {
  if (!s.trainer) throw new Error('the trainer is not configured yet: call configure(config) first');
  return s.trainer;
}

/**
 * The backend factory of a device (the CPU's without one). The CPU backend's stages block the
 * worker: between them it says it is still working, at most once a second (a GPU backend yields
 * while it waits, so pings get their answers).
 */
export function factoryFor(s: Session, g: GpuHandle | null): Factory {
  const working = () => {
    const now = Date.now();
    if (now - s.lastWorking < WORKING_EVERY_MS) return;
    s.lastWorking = now;
    // The trainer counts an iteration from its start: this is the one computing.
    emit(s, { type: 'working', iter: s.trainer?.iter ?? 0 });
  };
  if (!g) return (shape, params) => createCpuBackend(shape, params, { progress: working });
  return async (shape, params) => {
    const { openGpuBackend } = await import('../core/gpuBackend');
    return openGpuBackend(g.device, shape, params, { label: g.label });
  };
}

export function retire(s: Session, g: GpuHandle | null): void {
  if (!g) return;
  s.retired.add(g.device);
  g.device.destroy();
}

/** A new trainer for the session's config on its device (from `resume`, else from the start). */
export async function build(s: Session, resume?: TrainerSnapshot): Promise<void> {
  s.trainer?.destroy();
  s.trainer = null;
  let lastProgress = 0;
  s.trainer = await createTrainer(s.config!, factoryFor(s, s.handle), {
    ...(resume ? { resume } : {}),
    onSnapshot: (snapshot) => emit(s, { type: 'snapshot', snapshot }),
    // A few events a second: the page draws a progress bar, not every step.
    onPretrain: (done, steps) => {
      const now = Date.now();
      if (done < steps && now - lastProgress < PRETRAIN_PROGRESS_MS) return;
      lastProgress = now;
      if (done < steps) emit(s, { type: 'pretrain', done, steps });
    },
  });
  const pre = s.trainer.pretrain;
  if (pre) {
    const steps = s.config!.init.steps;
    emit(s, { type: 'pretrain', done: steps, steps, start: { startSuccess: pre.startSuccess, scratchSuccess: pre.scratchSuccess, demoSuccess: pre.demoSuccess, ms: pre.ms, shipped: pre.shipped } });
  }
}

export async function stopLoop(s: Session): Promise<void> {
  s.running = false;
  await s.loop;
}

/** True if the current device is lost, or becomes so within a short grace period. */
async function deviceLost(s: Session): Promise<boolean> {
  const d = s.handle?.device;
  if (!d || s.retired.has(d)) return false;
  return Promise.race([d.lost.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), LOST_GRACE_MS))]);
}

/**
 * New device, same run: restore a snapshot from before the last iteration and replay what was
 * already reported, which makes the last batch again (an export after the move writes it).
 * Returns the snapshot's iteration.
 */
async function recover(s: Session): Promise<number> {
  const snapshot = requireTrainer(s).replayFrom;
  s.handle = await openGpu(s.gpu!);
  await build(s, snapshot);
  while (s.trainer!.iter < s.lastEmitted) await s.trainer!.step();
  return snapshot.iter;
}

/**
 * A call that reads or writes the device outside a step (an export of the batch, the group view's
 * batch, a settings change): if the device was lost, the run moves to a new one (as a step does)
 * and the call is made again there.
 */
export async function onLiveDevice<T>(s: Session, what: string, fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (attempt >= MAX_RECOVERIES || !(await deviceLost(s))) throw e;
      const from = await recover(s);
      emit(s, {
        type: 'device-lost',
        iter: s.lastEmitted + 1,
        message: `The GPU device was lost while ${what} (${(e as Error).message}); the run moved to a new device from its snapshot at iteration ${from} and goes on there.`,
      });
    }
  }
}

/** Tells the UI about a roll-back; callers first deliver every row they hold, so none arrives after it. */
export function reportNonFinite(s: Session, e: NonFiniteError): void {
  emit(s, { type: 'non-finite', iter: e.iter, rolledBackTo: e.rolledBackTo, quantities: e.quantities, message: e.message });
}

/** One iteration, surviving lost devices; a NaN has rolled back when NonFiniteError is thrown. */
export async function safeStep(s: Session): Promise<MetricRow> {
  for (let attempt = 0; ; attempt++) {
    const t = requireTrainer(s);
    try {
      const row = await t.step();
      s.lastEmitted = row.iter;
      return row;
    } catch (e) {
      if (e instanceof NonFiniteError) {
        s.lastEmitted = Math.min(s.lastEmitted, e.rolledBackTo);
        throw e;
      }
      if (attempt >= MAX_RECOVERIES || !(await deviceLost(s))) throw e;
      const at = s.lastEmitted + 1;
      const from = await recover(s);
      emit(s, {
        type: 'device-lost',
        iter: at,
        message: `The GPU device was lost at iteration ${at} (${(e as Error).message}); the run moved to a new device from its snapshot at iteration ${from} and continues.`,
      });
    }
  }
}
