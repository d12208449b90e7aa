/**
 * The trainer as a plain object (testable in Node); `trainer.worker.ts` exposes it with Comlink.
 * It owns the backend: WebGPU where an adapter exists, else the CPU references. With backend
 * 'auto', a software adapter (SwiftShader) defaults to the CPU, which is faster there, and says so.
 *
 * Reliability (trainerSession.ts): a lost GPU device is replaced and the run resumes from its last
 * snapshot, replaying silently up to the last iteration already reported; a NaN rolls back and
 * pauses (trainer.ts NonFiniteError).
 */
import { transfer } from 'comlink';
import type { BackendChoice, DebugFault, ResumeFrom, TrainerApi } from './api';
import { withMethods, type RunConfig } from '../core/config';
import { KernelCompileError } from '../../kernels/pipeline';
import type { MetricRow } from '../core/metrics';
import { createEnv } from '../core/envs';
import { estimateRunCost } from '../core/runCost';
import { rescoreBatch } from '../core/batchLab';
import { labDumpOf } from '../explain/labDump';
import { lessonById } from '../content/lessons';
import { whyLessonById } from '../content/why';
import { trainLessonRun } from '../content/lessonRunner';
import { packBatch, packBuffers, packStages, unpackBatchInSlices } from '../formats/batchDump';
import { batchJsonParts } from '../formats/batchJsonText';
import { exportToFramework } from '../formats/frameworkExport';
import { modelDims, NonFiniteError, type Trainer } from '../core/trainer';
import type { GpuHandle } from '../core/gpuDevice';
import type { MlpDims } from '../../kernels/model/mlp';
import {
  build, cpuChoice, createSession, factoryFor, onLiveDevice, openGpu, reportNonFinite, requireTrainer, retire, safeStep, stopLoop,
  type Chosen, type Session,
} from './trainerSession';

/** Metrics are posted to the UI at most this often, so React is not flooded. */
const FLUSH_MS = 100;
/** Test builds only: vite replaces import.meta.env.MODE at build time; plain Node (the CLI) has no env. */
const FAULT_HOOKS = import.meta.env?.MODE !== undefined && import.meta.env.MODE !== 'production';

/**
 * The backend to run, and the device for a GPU one. Its kernels are compiled when the backend is
 * made (openGpuBackend: the pipelines that run needs, nothing else); configure() falls back to the
 * CPU if they fail to compile and the choice was 'auto'.
 */
async function chooseBackend(choice: BackendChoice, gpu: GPU | undefined): Promise<Chosen> {
  if (choice === 'cpu') return cpuChoice('CPU backend chosen');
  if (!gpu) {
    if (choice === 'gpu') throw new Error('WebGPU is not available in this browser (navigator.gpu is missing)');
    return cpuChoice('this browser has no WebGPU');
  }
  let g: GpuHandle;
  try {
    g = await openGpu(gpu);
  } catch (e) {
    if (choice === 'gpu') throw e;
    return cpuChoice(`no usable WebGPU adapter (${(e as Error).message})`);
  }
  if (g.isFallbackAdapter && choice === 'auto') {
    g.device.destroy();
    return cpuChoice(`the WebGPU adapter is a software fallback (${g.label}), slower than the CPU path; choose GPU to force it`);
  }
  return { info: { kind: 'gpu', label: g.label, isFallbackAdapter: g.isFallbackAdapter, fallbackReason: null }, gpu: g };
}

/** The message of a lesson seed stopped by stopLessonSeeds (the page queues it again). */
export const LESSON_SEED_STOPPED = 'lesson seed stopped';
/** A lesson seed yields to the page's calls (and reports its iteration) this often. */
const SEED_YIELD_MS = 100;

export function createTrainerApi(gpu: GPU | undefined = (globalThis.navigator as Navigator | undefined)?.gpu): TrainerApi {
  const s = createSession(gpu);
  return {
    ...runControls(s),
    ...batchQueries(s),
    async subscribe(fn) {
      s.onEvent = fn;
    },
    async ping() {
      return Date.now();
    },
    async estimateCost(cfg) {
      return estimateRunCost(cfg);
    },
    async debug(fault: DebugFault, ms = 60_000) {
      injectFault(s, fault, ms);
    },
  };
}

/** Configure, change, start, pause, step, reset and end a run. */
function runControls(s: Session): Pick<TrainerApi, 'configure' | 'applyConfig' | 'start' | 'pause' | 'step' | 'stepThrough' | 'reset' | 'dispose'> {
  return {
    async configure(cfg, choice, resume?: ResumeFrom) {
      await stopLoop(s);
      let chosen = await chooseBackend(choice, s.gpu);
      retire(s, s.handle);
      s.config = cfg;
      s.handle = chosen.gpu;
      try {
        await build(s, resume?.snapshot);
      } catch (e) {
        if (!(s.handle && choice === 'auto' && e instanceof KernelCompileError)) throw e;
        const label = s.handle.label;
        retire(s, s.handle);
        s.handle = null;
        chosen = cpuChoice(`the WebGPU kernels failed to compile on ${label} (${e.problems.join('; ')})`);
        await build(s, resume?.snapshot);
      }
      s.lastEmitted = resume?.snapshot?.iter ?? 0;
      if (resume) {
        while (s.trainer!.iter < resume.replayTo) s.lastEmitted = (await s.trainer!.step()).iter;
      }
      return { ...chosen.info, label: s.trainer!.backend.label };
    },
    async applyConfig(cfg) {
      await stopLoop(s);
      const t = requireTrainer(s);
      if (cfg.task !== s.config!.task) return { applied: false, reason: `changing the task (${s.config!.task} to ${cfg.task}) needs a new model` };
      const reason = modelChange(t.shape.dims, cfg);
      if (reason) return { applied: false, reason };
      const snapshot = await onLiveDevice(s, 'reading the weights', () => requireTrainer(s).snapshotNow());
      s.config = cfg;
      await build(s, snapshot);
      return { applied: true, snapshot };
    },
    async start(onMetrics: (rows: MetricRow[]) => void, untilIter?: number, delayMs = 0) {
      requireTrainer(s);
      if (s.running) return;
      s.running = true;
      s.loop = trainLoop(s, onMetrics, untilIter, delayMs);
      await s.loop;
    },
    async pause() {
      await stopLoop(s);
    },
    async step() {
      await stopLoop(s);
      try {
        return await safeStep(s);
      } catch (e) {
        if (e instanceof NonFiniteError) reportNonFinite(s, e);
        throw e;
      }
    },
    async stepThrough() {
      await stopLoop(s);
      try {
        const { row, capture } = await onLiveDevice(s, 'stepping through an iteration', () => requireTrainer(s).stepThrough());
        s.lastEmitted = row.iter;
        const packs = await packStages(requireTrainer(s), capture);
        return transfer({ row, packs }, [...new Set(packs.flatMap(packBuffers))]);
      } catch (e) {
        if (e instanceof NonFiniteError) reportNonFinite(s, e);
        throw e;
      }
    },
    async reset() {
      await stopLoop(s);
      requireTrainer(s);
      await build(s);
      s.lastEmitted = 0;
    },
    async dispose() {
      await stopLoop(s);
      s.trainer?.destroy();
      s.trainer = null;
      retire(s, s.handle);
      s.handle = null;
    },
  };
}

/** Why `cfg` cannot carry the run's weights over: the model's shape it would change; null if it can. */
function modelChange(before: MlpDims, cfg: RunConfig): string | null {
  const after = modelDims(cfg, createEnv(cfg));
  const changed = (['V', 'K', 'D', 'H'] as const).filter((k) => before[k] !== after[k]);
  if (!changed.length) return null;
  const names = { V: 'vocabulary', K: 'context', D: 'embedding size', H: 'hidden units' };
  return `the change alters the model's shape (${changed.map((k) => `${names[k]} ${before[k]} to ${after[k]}`).join(', ')})`;
}

/** Steps while the run is on (to `untilIter`), posting rows at most every FLUSH_MS; a NaN pauses it. */
async function trainLoop(s: Session, onMetrics: (rows: MetricRow[]) => void, untilIter: number | undefined, delayMs: number): Promise<void> {
  let pending: MetricRow[] = [];
  let last = Date.now();
  /** The last batch sent: through Comlink a call that returns a promise, settled once the page has taken the rows. */
  let sent: unknown;
  try {
    while (s.running && (untilIter === undefined || requireTrainer(s).iter < untilIter)) {
      try {
        pending.push(await safeStep(s));
      } catch (e) {
        // A NaN pauses the run (the event says why); anything else ends start() with the error.
        if (e instanceof NonFiniteError) {
          if (pending.length) await onMetrics(pending);
          pending = [];
          reportNonFinite(s, e);
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
    s.running = false;
  }
}

/** What the page reads of the last batch, a lesson's runs, and the batch lab. */
function batchQueries(s: Session): Pick<TrainerApi, 'describeTrajectory' | 'packBatch' | 'batchJson' | 'trainLessonSeed' | 'stopLessonSeeds' | 'frameworkExport' | 'recipeZip' | 'rescore' | 'labDump'> {
  const lastPack = (what: string) => onLiveDevice(s, what, async () => (s.trainer?.lastBatch ? packBatch(s.trainer) : null));
  return {
    async describeTrajectory(n) {
      const b = s.trainer?.lastBatch;
      if (!b || n < 0 || n >= b.episodes.size) return null;
      return { text: b.episodes.describe(n), reward: b.rewards[n]!, group: Math.floor(n / b.episodes.group) };
    },
    async packBatch() {
      if (!s.trainer?.lastBatch) return null;
      const pack = await lastPack('reading the batch');
      return pack && transfer(pack, packBuffers(pack));
    },
    async batchJson() {
      if (!s.trainer?.lastBatch) return null;
      const pack = await lastPack('writing the batch');
      if (!pack) throw new Error('the GPU device was lost and the last batch with it; step once for a new batch');
      // In slices, with pauses: the page's heartbeat is answered while a large batch is written.
      const dump = await unpackBatchInSlices(pack, 50);
      return new Blob(await batchJsonParts(dump), { type: 'application/json' });
    },
    async trainLessonSeed(lessonId, runId, seed, onIter) {
      // A method's disease regime (app/why/) trains through the same call, as a lesson of its own.
      const lesson = lessonById(lessonId) ?? whyLessonById(lessonId);
      if (!lesson) throw new Error(`no lesson "${lessonId}"`);
      const generation = s.seedGeneration;
      let yielded = Date.now();
      // The CPU backend with this worker's progress events: the page hears it is busy, not hung.
      const r = await trainLessonRun(lesson, runId, seed, factoryFor(s, null), async (iter) => {
        // Every SEED_YIELD_MS the worker serves the page's calls (a new run to build, a ping, a stop)
        // and says how far the seed is; not after every iteration, which costs a timer each.
        if (Date.now() - yielded < SEED_YIELD_MS) return;
        onIter?.(iter);
        await new Promise((resolve) => setTimeout(resolve, 0));
        yielded = Date.now();
        if (generation !== s.seedGeneration) throw new Error(LESSON_SEED_STOPPED);
      });
      return { rows: r.rows, dump: r.dump };
    },
    async stopLessonSeeds() {
      s.seedGeneration++;
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
      return onLiveDevice(s, 'rescoring the batch', async () => {
        const t: Trainer = requireTrainer(s);
        return rescoreBatch(t, methodSets.map((ids) => withMethods(t.config, ids)));
      });
    },
    async labDump(methods) {
      return onLiveDevice(s, 'rescoring the batch', async () => {
        const t = requireTrainer(s);
        return labDumpOf(t, withMethods(t.config, methods));
      });
    },
  };
}

/** Test builds' fault hooks (vitest, `vite build --mode e2e`): a production bundle refuses them. */
function injectFault(s: Session, fault: DebugFault, ms: number): void {
  if (!FAULT_HOOKS) throw new Error('fault hooks are not part of this build');
  switch (fault) {
    case 'nan':
      requireTrainer(s).backend.injectNaN();
      return;
    case 'lose-device':
      if (!s.handle) throw new Error('lose-device: the run is on the CPU backend, which has no device to lose');
      s.handle.device.destroy();
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
}
