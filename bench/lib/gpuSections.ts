/**
 * The GPU sections of the benchmark on any WebGPU implementation: Chromium's navigator.gpu (the
 * bench page) or Dawn's `create()` in Node (bench/dawn.ts, for GPU machines without a browser).
 */
import { defaultKernelVariant, subgroupFeatures, type KernelVariant } from '../../kernels/selectors';
import { createCpuBackend } from '../../workers/core/cpuBackend';
import { createGpuBackend } from '../../workers/core/gpuBackend';
import { requestGpu } from '../../workers/core/gpuDevice';
import { runKernelBench, type KernelBenchOptions } from '../page/kernels';
import { countingDevice } from './counting';
import { benchIterations, type Contender, type ScaleSpec } from './iteration';
import type { AdapterEnv, IterationRow } from './types';

export async function adapterEnv(gpu: GPU | undefined): Promise<AdapterEnv> {
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

/** A device for the kernel timings: timestamp-query and subgroups when the adapter has them, its buffer limits. */
async function timingDevice(gpu: GPU): Promise<GPUDevice> {
  const adapter = await gpu.requestAdapter();
  if (!adapter) throw new Error('no WebGPU adapter');
  const requiredFeatures: GPUFeatureName[] = [...(adapter.features.has('timestamp-query') ? ['timestamp-query' as const] : []), ...subgroupFeatures(gpu, adapter)];
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
  /** Forces the GPU backend's kernel variant (kernels/selectors.ts; default: defaultKernelVariant of the device). */
  kernelVariant?: KernelVariant;
}

const NO_TIME = { n: 0, median: NaN, min: NaN, max: NaN, mean: NaN };

function emptyRow(spec: ScaleSpec, note: string, where: Contender['where']): IterationRow {
  return {
    backend: 'gpu', where, scale: spec.name, batch: Number(spec.set.batch ?? NaN), group: NaN, N: NaN, R: NaN,
    warmup: 0, reps: 0, iterMs: NO_TIME, rolloutMs: NO_TIME, updateMs: NO_TIME, tokens: NaN, tokensPerSec: NaN, turns: NaN, note,
  };
}

export async function iterationSection(
  gpuApi: GPU | undefined,
  o: IterationPageOptions,
  log: (m: string) => void,
  where: Contender['where'] = 'chromium',
): Promise<IterationRow[]> {
  let gpu: Awaited<ReturnType<typeof requestGpu>> | null = null;
  let gpuError: string | null = null;
  try {
    gpu = await requestGpu(gpuApi);
  } catch (e) {
    gpuError = (e as Error).message;
  }
  const counting = gpu ? countingDevice(gpu.device) : undefined;
  const rows: IterationRow[] = [];
  for (const spec of o.scales) {
    const contenders: Contender[] = [];
    const gpuHere = o.gpuScales.includes(spec.name);
    if (gpu && counting && gpuHere) {
      const kernelVariant = o.kernelVariant ?? defaultKernelVariant(gpu.device);
      contenders.push({
        backend: 'gpu',
        where,
        factory: (shape, params) => createGpuBackend(counting.device, shape, params, { label: gpu.label, kernelVariant }),
        counting,
        kernelVariant,
      });
    }
    if (o.cpuScales.includes(spec.name)) contenders.push({ backend: 'cpu', where, factory: createCpuBackend });
    if (!gpu) rows.push(emptyRow(spec, `no GPU backend: ${gpuError}`, where));
    else if (!gpuHere) {
      rows.push(emptyRow(spec, 'not in --gpu-scales', where));
    }
    if (contenders.length) rows.push(...(await benchIterations(spec, contenders, log)));
  }
  gpu?.device.destroy();
  return rows;
}

export async function kernelsSection(gpu: GPU, o: Omit<KernelBenchOptions, 'log'>, log: (m: string) => void) {
  const device = await timingDevice(gpu);
  try {
    return await runKernelBench(device, { ...o, log });
  } finally {
    device.destroy();
  }
}

