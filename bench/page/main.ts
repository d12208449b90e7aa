/**
 * The benchmark page: the real kernels and backends in headless Chromium, driven by bench/run.ts
 * through `window.__bench`. Every entry takes plain JSON options and returns plain JSON; progress
 * goes to the console with a `[bench]` prefix (run.ts forwards it to stderr).
 */
import { createCpuBackend } from '../../workers/cpuBackend';
import { createGpuBackend } from '../../workers/gpuBackend';
import { requestGpu } from '../../workers/gpuDevice';
import { countingDevice } from '../lib/counting';
import { benchIterations, type Contender, type ScaleSpec } from '../lib/iteration';
import type { AdapterEnv, IterationRow, PageEnv } from '../lib/types';
import { runKernelBench, type KernelBenchOptions } from './kernels';
import { runPeerBench, type PeerOptions } from './peer';
import { runScaling, type ScalingOptions } from './scaling';

const logEl = document.getElementById('log');
function log(msg: string): void {
  console.log(`[bench] ${msg}`);
  if (logEl) logEl.textContent += msg + '\n';
}

async function adapterEnv(): Promise<AdapterEnv> {
  const gpu = navigator.gpu;
  if (!gpu) return { available: false, error: 'navigator.gpu is missing' };
  const adapter = await gpu.requestAdapter().catch(() => null);
  if (!adapter) return { available: false, error: 'requestAdapter() returned null' };
  const info = adapter.info as GPUAdapterInfo & { isFallbackAdapter?: boolean };
  const limits: Record<string, number> = {};
  for (const k of ['maxStorageBufferBindingSize', 'maxBufferSize', 'maxComputeWorkgroupStorageSize', 'maxComputeInvocationsPerWorkgroup'] as const) {
    limits[k] = adapter.limits[k];
  }
  return {
    available: true,
    vendor: info.vendor,
    architecture: info.architecture,
    device: info.device,
    description: info.description,
    isFallbackAdapter: Boolean(info.isFallbackAdapter ?? (adapter as GPUAdapter & { isFallbackAdapter?: boolean }).isFallbackAdapter),
    features: [...adapter.features].sort(),
    timestampQuery: adapter.features.has('timestamp-query'),
    limits,
  };
}

/** A device for the kernel timings: timestamp-query when the adapter has it, the adapter's buffer limits. */
async function timingDevice(): Promise<GPUDevice> {
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) throw new Error('no WebGPU adapter');
  const requiredFeatures: GPUFeatureName[] = adapter.features.has('timestamp-query') ? ['timestamp-query'] : [];
  return adapter.requestDevice({
    label: 'bench timing device',
    requiredFeatures,
    requiredLimits: {
      maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
      maxBufferSize: adapter.limits.maxBufferSize,
    },
  });
}

export interface IterationPageOptions {
  scales: ScaleSpec[];
  /** Scales the GPU backend runs at; the others get a row that says why not. */
  gpuScales: string[];
  /** Scales at which the CPU backend also runs in the page, interleaved with the GPU one. */
  cpuScales: string[];
}

const NO_TIME = { n: 0, median: NaN, min: NaN, max: NaN, mean: NaN };

function emptyRow(spec: ScaleSpec, note: string): IterationRow {
  return {
    backend: 'gpu', where: 'chromium', scale: spec.name, batch: Number(spec.set.batch ?? NaN), group: NaN, N: NaN, R: NaN,
    warmup: 0, reps: 0, iterMs: NO_TIME, rolloutMs: NO_TIME, updateMs: NO_TIME, tokens: NaN, tokensPerSec: NaN, turns: NaN, note,
  };
}

async function iteration(o: IterationPageOptions): Promise<IterationRow[]> {
  let gpu: Awaited<ReturnType<typeof requestGpu>> | null = null;
  let gpuError: string | null = null;
  try {
    gpu = await requestGpu(navigator.gpu);
  } catch (e) {
    gpuError = (e as Error).message;
  }
  const counting = gpu ? countingDevice(gpu.device) : undefined;
  const rows: IterationRow[] = [];
  for (const spec of o.scales) {
    const contenders: Contender[] = [];
    const gpuHere = o.gpuScales.includes(spec.name);
    if (gpu && counting && gpuHere) {
      contenders.push({
        backend: 'gpu',
        where: 'chromium',
        factory: (shape, params) => createGpuBackend(counting.device, shape, params, { label: gpu.label }),
        counting,
      });
    }
    if (o.cpuScales.includes(spec.name)) contenders.push({ backend: 'cpu', where: 'chromium', factory: createCpuBackend });
    if (!gpu) rows.push(emptyRow(spec, `no GPU backend: ${gpuError}`));
    else if (!gpuHere) {
      rows.push(emptyRow(spec, 'not in --gpu-scales'));
    }
    if (contenders.length) rows.push(...(await benchIterations(spec, contenders, log)));
  }
  gpu?.device.destroy();
  return rows;
}

async function kernels(o: Omit<KernelBenchOptions, 'log'>) {
  const device = await timingDevice();
  try {
    return await runKernelBench(device, { ...o, log });
  } finally {
    device.destroy();
  }
}

const api = {
  ready: true,
  async env(): Promise<PageEnv> {
    const m = /(?:Headless)?Chrom(?:e|ium)\/([\d.]+)/.exec(navigator.userAgent);
    return {
      userAgent: navigator.userAgent,
      chromiumVersion: m?.[1] ?? null,
      hardwareConcurrency: navigator.hardwareConcurrency,
      crossOriginIsolated: globalThis.crossOriginIsolated ?? false,
      adapter: await adapterEnv(),
    };
  },
  kernels,
  iteration,
  peer: (o: PeerOptions) => runPeerBench(o, log),
  scaling: (o: ScalingOptions) => runScaling(o, log),
};

export type BenchApi = typeof api;

declare global {
  interface Window {
    __bench: BenchApi;
  }
}

window.__bench = api;
log('ready');
