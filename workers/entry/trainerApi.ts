/**
 * The trainer as a plain object (testable in Node); `trainer.worker.ts` exposes it with Comlink.
 * It owns the backend: WebGPU where an adapter exists, else the CPU references. With backend
 * 'auto', a software adapter (SwiftShader) defaults to the CPU, which is faster there, and says so.
 *
 * Reliability: a lost GPU device is replaced and the run resumes from its last snapshot, replaying
 * silently up to the last iteration already reported (runs are deterministic, so nothing is lost
 * or duplicated); a NaN rolls back and pauses (trainer.ts NonFiniteError).
 */
import { transfer } from 'comlink';
import type { BackendChoice, BackendInfo, DebugFault, ResumeFrom, TrainerApi, TrainerEvent } from './api';
import type { Backend, RunShape } from '../core/backend';
import { withMethods, type RunConfig } from '../core/config';
import { createCpuBackend } from '../core/cpuBackend';
import { KernelCompileError } from '../../kernels/pipeline';
import type { GpuHandle } from '../core/gpuDevice';
import type { MetricRow } from '../core/metrics';
import { createEnv } from '../core/envs';
import { estimateRunCost } from '../core/runCost';
import { rescoreBatch } from '../core/batchLab';
import { lessonById } from '../content/lessons';
import { trainLessonRun } from '../content/lessonRunner';
import { packBuffers, unpackBatchInSlices } from '../formats/batchDump';
import { batchJsonParts } from '../formats/batchJsonText';
import { exportToFramework } from '../formats/frameworkExport';
import { createTrainer, modelDims, NonFiniteError, type Trainer, type TrainerSnapshot } from '../core/trainer';

const CPU_LABEL = 'CPU (TypeScript reference kernels)';
/** Metrics are posted to the UI at most this often, so React is not flooded. */
const FLUSH_MS = 100;
/** A rejected GPU call counts as a lost device if device.lost resolves within this time. */
const LOST_GRACE_MS = 2000;
/** Give up after this many device losses in a row without a completed iteration. */
const MAX_RECOVERIES = 3;
/** 'working' events during a blocking CPU iteration: this often at most (the page's ping every 3 s). */
const WORKING_EVERY_MS = 1000;
/** Test builds only: vite replaces import.meta.env.MODE at build time; plain Node (the CLI) has no env. */
const FAULT_HOOKS = import.meta.env?.MODE !== undefined && import.meta.env.MODE !== 'production';

type Factory = (shape: RunShape, params: Float32Array) => Backend | Promise<Backend>;

interface Chosen {
  info: BackendInfo;
  gpu: GpuHandle | null;
}

async function openGpu(gpu: GPU): Promise<GpuHandle> {
  const { requestGpu } = await import('../core/gpuDevice');
  return requestGpu(gpu);
}

const cpu = (reason: string): Chosen => ({
  info: { kind: 'cpu', label: CPU_LABEL, isFallbackAdapter: false, fallbackReason: reason },
  gpu: null,
});

/**
 * The backend to run, and the device for a GPU one. Its kernels are compiled when the backend is
 * made (openGpuBackend: the pipelines that run needs, nothing else); configure() falls back to the
 * CPU if they fail to compile and the choice was 'auto'.
 */
async function chooseBackend(choice: BackendChoice, gpu: GPU | undefined): Promise<Chosen> {
  if (choice === 'cpu') return cpu('CPU backend chosen');
  if (!gpu) {
    if (choice === 'gpu') throw new Error('WebGPU is not available in this browser (navigator.gpu is missing)');
    return cpu('this browser has no WebGPU');
  }
  let g: GpuHandle;
  try {
    g = await openGpu(gpu);
  } catch (e) {
    if (choice === 'gpu') throw e;
    return cpu(`no usable WebGPU adapter (${(e as Error).message})`);
  }
  if (g.isFallbackAdapter && choice === 'auto') {
    g.device.destroy();
    return cpu(`the WebGPU adapter is a software fallback (${g.label}), slower than the CPU path; choose GPU to force it`);
  }
  return { info: { kind: 'gpu', label: g.label, isFallbackAdapter: g.isFallbackAdapter, fallbackReason: null }, gpu: g };
}

const PRETRAIN_PROGRESS_MS = 200;

/** The message of a lesson seed stopped by stopLessonSeeds (the page queues it again). */
export const LESSON_SEED_STOPPED = 'lesson seed stopped';
/** A lesson seed yields to the page's calls (and reports its iteration) this often. */
const SEED_YIELD_MS = 100;

export function createTrainerApi(gpu: GPU | undefined = (globalThis.navigator as Navigator | undefined)?.gpu): TrainerApi {
  /** Bumped by stopLessonSeeds: a lesson seed started under an older one stops at its next iteration. */
  let seedGeneration = 0;
  let config: RunConfig | null = null;
  let handle: GpuHandle | null = null;
  let trainer: Trainer | null = null;
  let running = false;
  let loop: Promise<void> | null = null;
  /** The highest iteration whose metrics left this object. */
  let lastEmitted = 0;
  let onEvent: ((e: TrainerEvent) => void) | null = null;
  /** Devices we destroyed on purpose: their loss is not a fault. */
  const retired = new WeakSet<GPUDevice>();

  const emit = (e: TrainerEvent) => onEvent?.(e);

  // The CPU backend's stages block this worker: between them it says it is still working, at most
  // once a second (a GPU backend yields while it waits, so pings get their answers).
  let lastWorking = 0;
  const working = () => {
    const now = Date.now();
    if (now - lastWorking < WORKING_EVERY_MS) return;
    lastWorking = now;
    // The trainer counts an iteration from its start: this is the one computing.
    emit({ type: 'working', iter: trainer?.iter ?? 0 });
  };

  const factoryFor = (g: GpuHandle | null): Factory => {
    if (!g) return (shape, params) => createCpuBackend(shape, params, { progress: working });
    return async (shape, params) => {
      const { openGpuBackend } = await import('../core/gpuBackend');
      return openGpuBackend(g.device, shape, params, { label: g.label });
    };
  };

  const requireTrainer = (): Trainer => {
    if (!trainer) throw new Error('the trainer is not configured yet: call configure(config) first');
    return trainer;
  };

  function retire(g: GpuHandle | null): void {
    if (!g) return;
    retired.add(g.device);
    g.device.destroy();
  }

  async function build(resume?: TrainerSnapshot): Promise<void> {
    trainer?.destroy();
    trainer = null;
    let lastProgress = 0;
    trainer = await createTrainer(config!, factoryFor(handle), {
      ...(resume ? { resume } : {}),
      onSnapshot: (snapshot) => emit({ type: 'snapshot', snapshot }),
      // A few events a second: the page draws a progress bar, not every step.
      onPretrain: (done, steps) => {
        const now = Date.now();
        if (done < steps && now - lastProgress < PRETRAIN_PROGRESS_MS) return;
        lastProgress = now;
        if (done < steps) emit({ type: 'pretrain', done, steps });
      },
    });
    const pre = trainer.pretrain;
    if (pre) {
      const steps = config!.init.steps;
      emit({ type: 'pretrain', done: steps, steps, start: { startSuccess: pre.startSuccess, scratchSuccess: pre.scratchSuccess, demoSuccess: pre.demoSuccess, ms: pre.ms } });
    }
  }

  async function stopLoop(): Promise<void> {
    running = false;
    await loop;
  }

  /** True if the current device is lost, or becomes so within a short grace period. */
  async function deviceLost(): Promise<boolean> {
    const d = handle?.device;
    if (!d || retired.has(d)) return false;
    const lost = await Promise.race([d.lost.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), LOST_GRACE_MS))]);
    return lost;
  }

  /** New device, same run: restore the last snapshot and replay what was already reported. */
  async function recover(): Promise<void> {
    const snapshot = requireTrainer().lastGood;
    const g = await openGpu(gpu!);
    handle = g;
    await build(snapshot);
    while (trainer!.iter < lastEmitted) await trainer!.step();
  }

  /**
   * A call that reads or writes the device outside a step (an export of the batch, the group view's
   * batch, a settings change): if the device was lost, the run moves to a new one (as a step does)
   * and the call is made again there.
   */
  async function onLiveDevice<T>(what: string, fn: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn();
      } catch (e) {
        if (attempt >= MAX_RECOVERIES || !(await deviceLost())) throw e;
        await recover();
        emit({
          type: 'device-lost',
          iter: lastEmitted + 1,
          message: `The GPU device was lost while ${what} (${(e as Error).message}); the run moved to a new device from its snapshot at iteration ${requireTrainer().lastGood.iter} and goes on there.`,
        });
      }
    }
  }

  /** Tells the UI about a roll-back; callers first deliver every row they hold, so none arrives after it. */
  function reportNonFinite(e: NonFiniteError): void {
    emit({ type: 'non-finite', iter: e.iter, rolledBackTo: e.rolledBackTo, quantities: e.quantities, message: e.message });
  }

  /** One iteration, surviving lost devices; a NaN has rolled back when NonFiniteError is thrown. */
  async function safeStep(): Promise<MetricRow> {
    for (let attempt = 0; ; attempt++) {
      const t = requireTrainer();
      try {
        const row = await t.step();
        lastEmitted = row.iter;
        return row;
      } catch (e) {
        if (e instanceof NonFiniteError) {
          lastEmitted = Math.min(lastEmitted, e.rolledBackTo);
          throw e;
        }
        if (attempt >= MAX_RECOVERIES || !(await deviceLost())) throw e;
        const at = lastEmitted + 1;
        await recover();
        emit({
          type: 'device-lost',
          iter: at,
          message: `The GPU device was lost at iteration ${at} (${(e as Error).message}); the run moved to a new device from its snapshot at iteration ${requireTrainer().lastGood.iter} and continues.`,
        });
      }
    }
  }

  return {
    async configure(cfg, choice, resume?: ResumeFrom) {
      await stopLoop();
      let chosen = await chooseBackend(choice, gpu);
      retire(handle);
      config = cfg;
      handle = chosen.gpu;
      try {
        await build(resume?.snapshot);
      } catch (e) {
        if (!(handle && choice === 'auto' && e instanceof KernelCompileError)) throw e;
        const label = handle.label;
        retire(handle);
        handle = null;
        chosen = cpu(`the WebGPU kernels failed to compile on ${label} (${e.problems.join('; ')})`);
        await build(resume?.snapshot);
      }
      lastEmitted = resume?.snapshot?.iter ?? 0;
      if (resume) {
        while (trainer!.iter < resume.replayTo) lastEmitted = (await trainer!.step()).iter;
      }
      return { ...chosen.info, label: trainer!.backend.label };
    },
    async applyConfig(cfg) {
      await stopLoop();
      const t = requireTrainer();
      if (cfg.task !== config!.task) return { applied: false, reason: `changing the task (${config!.task} to ${cfg.task}) needs a new model` };
      const before = t.shape.dims;
      const after = modelDims(cfg, createEnv(cfg));
      const changed = (['V', 'K', 'D', 'H'] as const).filter((k) => before[k] !== after[k]);
      if (changed.length) {
        const names = { V: 'vocabulary', K: 'context', D: 'embedding size', H: 'hidden units' };
        return {
          applied: false,
          reason: `the change alters the model's shape (${changed.map((k) => `${names[k]} ${before[k]} to ${after[k]}`).join(', ')})`,
        };
      }
      const snapshot = await onLiveDevice('reading the weights', () => requireTrainer().snapshotNow());
      config = cfg;
      await build(snapshot);
      return { applied: true, snapshot };
    },
    async subscribe(fn) {
      onEvent = fn;
    },
    async ping() {
      return Date.now();
    },
    async estimateCost(cfg) {
      return estimateRunCost(cfg);
    },
    async start(onMetrics: (rows: MetricRow[]) => void, untilIter?: number, delayMs = 0) {
      requireTrainer();
      if (running) return;
      running = true;
      loop = (async () => {
        let pending: MetricRow[] = [];
        let last = Date.now();
        /** The last batch sent: through Comlink a call that returns a promise, settled once the page has taken the rows. */
        let sent: unknown;
        try {
          while (running && (untilIter === undefined || requireTrainer().iter < untilIter)) {
            try {
              pending.push(await safeStep());
            } catch (e) {
              // A NaN pauses the run (the event says why); anything else ends start() with the error.
              if (e instanceof NonFiniteError) {
                if (pending.length) await onMetrics(pending);
                pending = [];
                reportNonFinite(e);
                break;
              }
              throw e;
            }
            if (Date.now() - last >= FLUSH_MS) {
              sent = onMetrics(pending);
              pending = [];
              last = Date.now();
            }
            // Yield so pause() and other calls are served between iterations (and pace the run).
            await new Promise((r) => setTimeout(r, Math.max(0, delayMs)));
          }
        } finally {
          // Awaited: through Comlink the callback travels on its own port, so without waiting the
          // last rows could reach the UI after start() has already resolved (a counter ticking
          // after Pause). Awaiting a direct (non-Comlink) callback is harmless.
          // The batch sent last is awaited too when nothing is left: its rows must not arrive after the end.
          if (pending.length) await onMetrics(pending);
          else await sent;
          running = false;
        }
      })();
      await loop;
    },
    async pause() {
      await stopLoop();
    },
    async step() {
      await stopLoop();
      try {
        return await safeStep();
      } catch (e) {
        if (e instanceof NonFiniteError) reportNonFinite(e);
        throw e;
      }
    },
    async reset() {
      await stopLoop();
      requireTrainer();
      await build();
      lastEmitted = 0;
    },
    async describeTrajectory(n) {
      const b = trainer?.lastBatch;
      if (!b || n < 0 || n >= b.episodes.size) return null;
      return { text: b.episodes.describe(n), reward: b.rewards[n]!, group: Math.floor(n / b.episodes.group) };
    },
    async packBatch() {
      if (!trainer?.lastBatch) return null;
      const pack = await onLiveDevice('reading the batch', async () => (trainer?.lastBatch ? trainer.packBatch() : null));
      return pack && transfer(pack, packBuffers(pack));
    },
    async batchJson() {
      if (!trainer?.lastBatch) return null;
      const pack = await onLiveDevice('writing the batch', async () => (trainer?.lastBatch ? trainer.packBatch() : null));
      if (!pack) throw new Error('the GPU device was lost and the last batch with it; step once for a new batch');
      // In slices, with pauses: the page's heartbeat is answered while a large batch is written.
      const dump = await unpackBatchInSlices(pack, 50);
      return new Blob(await batchJsonParts(dump), { type: 'application/json' });
    },
    async trainLessonSeed(lessonId, runId, seed, onIter) {
      const lesson = lessonById(lessonId);
      if (!lesson) throw new Error(`no lesson "${lessonId}"`);
      const generation = seedGeneration;
      let yielded = Date.now();
      // The CPU backend with this worker's progress events: the page hears it is busy, not hung.
      const r = await trainLessonRun(lesson, runId, seed, factoryFor(null), async (iter) => {
        // Every SEED_YIELD_MS the worker serves the page's calls (a new run to build, a ping, a stop)
        // and says how far the seed is; not after every iteration, which costs a timer each.
        if (Date.now() - yielded < SEED_YIELD_MS) return;
        onIter?.(iter);
        await new Promise((resolve) => setTimeout(resolve, 0));
        yielded = Date.now();
        if (generation !== seedGeneration) throw new Error(LESSON_SEED_STOPPED);
      });
      return { rows: r.rows, dump: r.dump };
    },
    async stopLessonSeeds() {
      seedGeneration++;
    },
    async frameworkExport(cfg, framework) {
      return exportToFramework(cfg, framework);
    },
    async recipeZip(cfg, episodes) {
      // The generator and the Python it ships load on the first recipe, not with the worker.
      const [{ buildRecipe }, { zipFiles }] = await Promise.all([import('../formats/recipe'), import('../formats/recipe/zip')]);
      const recipe = buildRecipe(cfg, { episodes });
      const zip = zipFiles(recipe.files.map((f) => ({ path: `${recipe.name}/${f.path}`, text: f.text, mode: f.executable ? 0o755 : 0o644 })));
      return { name: recipe.name, files: recipe.files.length, zip: new Blob([zip], { type: 'application/zip' }) };
    },
    async rescore(methodSets) {
      return onLiveDevice('rescoring the batch', async () => {
        const t = requireTrainer();
        return rescoreBatch(t, methodSets.map((ids) => withMethods(t.config, ids)));
      });
    },
    async debug(fault: DebugFault, ms = 60_000) {
      // Fault hooks exist only in test builds (vitest, `vite build --mode e2e`): a production bundle drops them.
      if (!FAULT_HOOKS) throw new Error('fault hooks are not part of this build');
      switch (fault) {
        case 'nan':
          requireTrainer().backend.injectNaN();
          return;
        case 'lose-device':
          if (!handle) throw new Error('lose-device: the run is on the CPU backend, which has no device to lose');
          handle.device.destroy();
          return;
        case 'crash':
          // An uncaught error outside any call, as a bug in the engine would raise.
          setTimeout(() => {
            throw new Error('debug: the trainer worker crashed on purpose');
          }, 0);
          return;
        case 'hang': {
          const end = Date.now() + ms;
          setTimeout(() => {
            while (Date.now() < end) {
              // Busy: the worker answers nothing until this ends.
            }
          }, 0);
          return;
        }
      }
    },
    async dispose() {
      await stopLoop();
      trainer?.destroy();
      trainer = null;
      retire(handle);
      handle = null;
    },
  };
}
