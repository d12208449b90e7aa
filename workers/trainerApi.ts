/**
 * The trainer as a plain object (testable in Node); `trainer.worker.ts` exposes it with Comlink.
 * It owns the backend: WebGPU where an adapter exists, else the CPU references. With backend
 * 'auto', a software adapter (SwiftShader) defaults to the CPU, which is faster there, and says so.
 */
import type { BackendChoice, BackendInfo, TrainerApi } from './api';
import type { Backend, RunShape } from './backend';
import type { RunConfig } from './config';
import { createCpuBackend } from './cpuBackend';
import type { MetricRow } from './metrics';
import { createTrainer, type Trainer } from './trainer';

const CPU_LABEL = 'CPU (TypeScript reference kernels)';
/** Metrics are posted to the UI at most this often, so React is not flooded. */
const FLUSH_MS = 100;

type Factory = (shape: RunShape, params: Float32Array) => Backend | Promise<Backend>;

async function chooseBackend(choice: BackendChoice, gpu: GPU | undefined): Promise<{ info: BackendInfo; factory: Factory }> {
  const cpu = (reason: string) => ({
    info: { kind: 'cpu' as const, label: CPU_LABEL, isFallbackAdapter: false, fallbackReason: reason },
    factory: createCpuBackend as Factory,
  });
  if (choice === 'cpu') return cpu('CPU backend chosen');
  if (!gpu) {
    if (choice === 'gpu') throw new Error('WebGPU is not available in this browser (navigator.gpu is missing)');
    return cpu('this browser has no WebGPU');
  }
  const { requestGpu } = await import('./gpuDevice');
  const { createGpuBackend } = await import('./gpuBackend');
  const { validateKernels } = await import('../kernels/pipeline');
  const { ALL_KERNELS } = await import('../kernels/all');
  let g: Awaited<ReturnType<typeof requestGpu>>;
  try {
    // Kernels are compiled only once the adapter is known to be used.
    g = await requestGpu(gpu, { validate: false });
  } catch (e) {
    if (choice === 'gpu') throw e;
    return cpu(`no usable WebGPU adapter (${(e as Error).message})`);
  }
  if (g.isFallbackAdapter && choice === 'auto') {
    g.device.destroy();
    return cpu(`the WebGPU adapter is a software fallback (${g.label}), slower than the CPU path; choose GPU to force it`);
  }
  try {
    await validateKernels(g.device, ALL_KERNELS);
  } catch (e) {
    g.device.destroy();
    if (choice === 'gpu') throw e;
    return cpu(`the WebGPU kernels failed to compile on ${g.label} (${(e as Error).message})`);
  }
  return {
    info: { kind: 'gpu', label: g.label, isFallbackAdapter: g.isFallbackAdapter, fallbackReason: null },
    factory: (shape, params) => createGpuBackend(g.device, shape, params, { label: g.label }),
  };
}

export function createTrainerApi(gpu: GPU | undefined = (globalThis.navigator as Navigator | undefined)?.gpu): TrainerApi {
  let config: RunConfig | null = null;
  let factory: Factory | null = null;
  let trainer: Trainer | null = null;
  let running = false;
  let loop: Promise<void> | null = null;

  const requireTrainer = (): Trainer => {
    if (!trainer) throw new Error('the trainer is not configured yet: call configure(config) first');
    return trainer;
  };

  async function stopLoop(): Promise<void> {
    running = false;
    await loop;
  }

  async function rebuild(): Promise<void> {
    trainer?.destroy();
    trainer = null;
    trainer = await createTrainer(config!, factory!);
  }

  return {
    async configure(cfg, choice) {
      await stopLoop();
      const chosen = await chooseBackend(choice, gpu);
      config = cfg;
      factory = chosen.factory;
      await rebuild();
      return { ...chosen.info, label: trainer!.backend.label };
    },
    async start(onMetrics: (rows: MetricRow[]) => void, untilIter?: number) {
      const t = requireTrainer();
      if (running) return;
      running = true;
      loop = (async () => {
        let pending: MetricRow[] = [];
        let last = Date.now();
        try {
          while (running && (untilIter === undefined || t.iter < untilIter)) {
            pending.push(await t.step());
            if (Date.now() - last >= FLUSH_MS) {
              onMetrics(pending);
              pending = [];
              last = Date.now();
            }
            // Yield so pause() and other calls are served between iterations.
            await new Promise((r) => setTimeout(r, 0));
          }
        } finally {
          if (pending.length) onMetrics(pending);
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
      return requireTrainer().step();
    },
    async reset() {
      await stopLoop();
      requireTrainer();
      await rebuild();
    },
    async describeTrajectory(n) {
      const b = trainer?.lastBatch;
      if (!b || n < 0 || n >= b.episodes.size) return null;
      return { text: b.episodes.describe(n), reward: b.rewards[n]!, group: Math.floor(n / b.episodes.group) };
    },
    async dumpBatch() {
      return trainer?.lastBatch ? trainer.dumpBatch() : null;
    },
    async dispose() {
      await stopLoop();
      trainer?.destroy();
      trainer = null;
    },
  };
}
