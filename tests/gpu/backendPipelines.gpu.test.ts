/**
 * A run compiles the pipelines it binds and nothing else (workers/core/update/stages.ts backendPipelines):
 * on a device new to kernels/pipeline.ts (its pipeline cache empty), after openGpuBackend, every
 * pipeline was compiled ahead (none on first use at a bind) and every one compiled was bound, for
 * runs that take each conditional branch of the
 * backend (PPO's critic, OTB, whitening, IGPO's answer scoring, sequence and turn ratios, stale
 * rollouts, a sampler that is not the trainer, roles, the tools task, a vocabulary past the unrolled kernels' 64) in both kernel
 * variants. An iteration afterwards compiles nothing either. The runs share one device, each through
 * a view of it of its own (freshDevice), which also hands back a pipeline already compiled for the
 * same WGSL and constants: SwiftShader compiled the same 23-29 pipelines for every run, 7-10 s a
 * run, 86 s to 6 min for the file (tests/gpu/compile.gpu.test.ts compiles every kernel).
 * Also: a kernel that fails to compile on a hardware adapter sends an 'auto' run to the CPU with
 * the kernel's file named, and a forced GPU run fails with that error.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { deviceSupports, KernelCompileError, pipelineCounts } from '../../kernels/pipeline';
import type { KernelVariant } from '../../kernels/selectors';
import type { RunShape } from '../../workers/core/backend';
import { defaultConfig, withFieldText, type RunConfig } from '../../workers/core/config';
import { openGpuBackend } from '../../workers/core/gpuBackend';
import { requestGpu } from '../../workers/core/gpuDevice';
import { backendPipelines } from '../../workers/core/update/stages';
import { createTrainer } from '../../workers/core/trainer';
import { createTrainerApi } from '../../workers/entry/trainerApi';
import { requireFeature } from '../helpers/requireGpu';

const BASE: Record<string, string> = { batch: '2', group: '3', seed: '5', 'model.hidden': '16' };

function config(settings: Record<string, string>): RunConfig {
  let cfg = defaultConfig();
  const all = { ...BASE, ...settings };
  // The task first: it resets the task's own fields.
  if (all.task) cfg = withFieldText(cfg, 'task', all.task);
  for (const [k, v] of Object.entries(all)) if (k !== 'task') cfg = withFieldText(cfg, k, v);
  return cfg;
}

const CASES: Array<[string, Record<string, string>]> = [
  ['GRPO (the defaults)', {}],
  ['PPO: critic and whitening', { methods: 'ppo' }],
  ['OTB: the token baseline', { methods: 'otb' }],
  ['REINFORCE++: whitening without a critic', { methods: 'reinforcepp' }],
  ['IGPO: answer scoring', { methods: 'igpo' }],
  ['GSPO: sequence ratios', { methods: 'grpo,gspo' }],
  ['SeeUPO: turn stages', { methods: 'grpo,seeupo' }],
  ['VCPO: stale rollouts', { methods: 'vcpo', staleness: '2' }],
  ['the rollout sampler: bf16, top-p, top-k', { 'rollout.precision': 'bf16', 'rollout.topP': '0.8', 'rollout.topK': '5' }],
  ['Dr. MAS on roles', { task: 'roles', methods: 'grpo,drmas' }],
  ['CM2 on tools', { task: 'tools', methods: 'cm2' }],
  ['a vocabulary over 64', { 'env.entities': '32', 'env.values': '64' }],
];

/**
 * Views of one device, each a GPUDevice object of its own: kernels/pipeline.ts keys its pipeline
 * cache by that object, so to its cache and counts each view is a new device. A view's
 * createComputePipelineAsync gives a pipeline another view compiled for the same label, WGSL,
 * entry point and constants (a failure is not kept); everything else is the device's own.
 */
function sharedCompiles(device: GPUDevice): () => GPUDevice {
  const code = new WeakMap<GPUShaderModule, string>();
  const compiled = new Map<string, Promise<GPUComputePipeline>>();
  return () =>
    new Proxy(device, {
      get(target, prop) {
        if (prop === 'createShaderModule') {
          return (d: GPUShaderModuleDescriptor) => {
            const m = target.createShaderModule(d);
            code.set(m, d.code);
            return m;
          };
        }
        if (prop === 'createComputePipelineAsync') {
          return (d: GPUComputePipelineDescriptor) => {
            const key = JSON.stringify([d.label, code.get(d.compute.module), d.compute.entryPoint, d.compute.constants]);
            let p = compiled.get(key);
            if (!p) {
              compiled.set(key, (p = target.createComputePipelineAsync(d)));
              p.catch(() => compiled.delete(key));
            }
            return p;
          };
        }
        const v: unknown = Reflect.get(target, prop, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
}

let shared: Promise<{ device: GPUDevice; fresh: () => GPUDevice }> | null = null;
afterAll(async () => (await shared)?.device.destroy());

/** A device new to kernels/pipeline.ts: a view of the file's one device (sharedCompiles). */
async function freshDevice(): Promise<GPUDevice> {
  shared ??= requestGpu(navigator.gpu).then(({ device }) => ({ device, fresh: sharedCompiles(device) }));
  return (await shared).fresh();
}

const keyOf = (p: { label: string; constants?: Readonly<Record<string, number>> }) =>
  [p.label, ...Object.entries(p.constants ?? {}).sort().map(([k, v]) => `${k}=${v}`)].join(' ');

describe('a GPU run compiles the pipelines it binds, all of them ahead, and no others', () => {
  for (const variant of ['thread', 'subgroup'] as const satisfies readonly KernelVariant[]) {
    for (const [name, settings] of CASES) {
      it(`${name}, ${variant} variant`, async () => {
        const device = await freshDevice();
        if (variant === 'subgroup') requireFeature(device, 'subgroups');
        expect(pipelineCounts(device), 'a device new to the pipeline cache').toEqual({ sync: 0, async: 0, unused: [] });
        let shape: RunShape | null = null;
        const trainer = await createTrainer(config(settings), (s, params) => {
          shape = s;
          return openGpuBackend(device, s, params, { kernelVariant: variant });
        });
        try {
          const listed = backendPipelines(shape!, variant).filter((p) => deviceSupports(device, p));
          const distinct = new Set(listed.map(keyOf));
          const made = pipelineCounts(device);
          expect(made.sync, 'pipelines compiled at a bind, not ahead').toBe(0);
          expect(made.unused, 'pipelines compiled but never bound').toEqual([]);
          expect(made.async).toBe(distinct.size);
          await trainer.step();
          expect(pipelineCounts(device)).toEqual(made);
        } finally {
          trainer.destroy();
        }
      });
    }
  }

  it('the default run compiles about half of the kernels of kernels/all.ts, each once', async () => {
    for (const variant of ['thread', 'subgroup'] as const) {
      const device = await freshDevice();
      if (variant === 'subgroup') requireFeature(device, 'subgroups');
      const trainer = await createTrainer(config({}), (s, params) => openGpuBackend(device, s, params, { kernelVariant: variant }));
      try {
        const made = pipelineCounts(device);
        console.info(`[pipelines] default run, ${variant} variant: ${made.async} compiled ahead, ${made.sync} at a bind`);
        expect(made.async).toBeGreaterThan(15);
        expect(made.async).toBeLessThan(30);
      } finally {
        trainer.destroy();
      }
    }
  });
});

/**
 * navigator.gpu as a hardware adapter whose compiler rejects one kernel: the adapter says it is not
 * a fallback (SwiftShader's does, and 'auto' would pick the CPU before compiling anything), and
 * the device's createShaderModule breaks the source of the kernel labelled `broken`.
 */
function gpuBreaking(broken: string): GPU {
  const gpu = navigator.gpu;
  return {
    getPreferredCanvasFormat: () => gpu.getPreferredCanvasFormat(),
    wgslLanguageFeatures: gpu.wgslLanguageFeatures,
    async requestAdapter(options?: GPURequestAdapterOptions) {
      const adapter = await gpu.requestAdapter(options);
      if (!adapter) return null;
      return {
        features: adapter.features,
        limits: adapter.limits,
        info: { vendor: 'test', architecture: 'hardware', device: '', description: 'a compiler that rejects one kernel', isFallbackAdapter: false },
        isFallbackAdapter: false,
        async requestDevice(descriptor?: GPUDeviceDescriptor) {
          const device = await adapter.requestDevice(descriptor);
          const create = device.createShaderModule.bind(device);
          device.createShaderModule = (d: GPUShaderModuleDescriptor) => create(d.label === broken ? { ...d, code: `${d.code}\nfn broken( {` } : d);
          return device;
        },
      } as unknown as GPUAdapter;
    },
  } as unknown as GPU;
}

describe('a kernel that fails to compile', () => {
  it("sends an 'auto' run to the CPU backend, naming the kernel's file; a forced GPU run fails with it", async () => {
    const auto = createTrainerApi(gpuBreaking('advantage'));
    const info = await auto.configure(config({}), 'auto');
    expect(info.kind).toBe('cpu');
    expect(info.fallbackReason).toMatch(/kernels failed to compile on test hardware[^]*advantage\.wgsl:\d+/);
    expect((await auto.step()).iter).toBe(1);
    await auto.dispose();

    const forced = createTrainerApi(gpuBreaking('advantage'));
    const err = await forced.configure(config({}), 'gpu').then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(KernelCompileError);
    expect(err?.message).toMatch(/^WebGPU kernels failed to compile:\nadvantage\.wgsl:\d+:\d+: /);
    await forced.dispose();
  });

});
