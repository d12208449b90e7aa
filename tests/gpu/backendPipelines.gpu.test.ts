/**
 * A run compiles the pipelines it binds and nothing else (workers/core/update/stages.ts backendPipelines):
 * on a fresh device, after openGpuBackend, every pipeline was compiled ahead (none on first use
 * at a bind) and every one compiled was bound, for runs that take each conditional branch of the
 * backend (PPO's critic, OTB, whitening, IGPO's answer scoring, sequence and turn ratios, stale
 * rollouts, roles, the tools task, a vocabulary past the unrolled kernels' 64) in both kernel
 * variants. An iteration afterwards compiles nothing either.
 * Also: a kernel that fails to compile on a hardware adapter sends an 'auto' run to the CPU with
 * the kernel's file named, and a forced GPU run fails with that error.
 */
import { describe, expect, it } from 'vitest';
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
  ['Dr. MAS on roles', { task: 'roles', methods: 'grpo,drmas' }],
  ['CM2 on tools', { task: 'tools', methods: 'cm2' }],
  ['a vocabulary over 64', { 'env.entities': '32', 'env.values': '64' }],
];

const keyOf = (p: { label: string; constants?: Readonly<Record<string, number>> }) =>
  [p.label, ...Object.entries(p.constants ?? {}).sort().map(([k, v]) => `${k}=${v}`)].join(' ');

describe('a GPU run compiles the pipelines it binds, all of them ahead, and no others', () => {
  for (const variant of ['thread', 'subgroup'] as const satisfies readonly KernelVariant[]) {
    for (const [name, settings] of CASES) {
      it(`${name}, ${variant} variant`, async () => {
        const { device } = await requestGpu(navigator.gpu);
        if (variant === 'subgroup') requireFeature(device, 'subgroups');
        try {
          let shape: RunShape | null = null;
          const trainer = await createTrainer(config(settings), (s, params) => {
            shape = s;
            return openGpuBackend(device, s, params, { kernelVariant: variant });
          });
          const listed = backendPipelines(shape!, variant).filter((p) => deviceSupports(device, p));
          const distinct = new Set(listed.map(keyOf));
          const made = pipelineCounts(device);
          expect(made.sync, 'pipelines compiled at a bind, not ahead').toBe(0);
          expect(made.unused, 'pipelines compiled but never bound').toEqual([]);
          expect(made.async).toBe(distinct.size);
          await trainer.step();
          expect(pipelineCounts(device)).toEqual(made);
          trainer.destroy();
        } finally {
          device.destroy();
        }
      });
    }
  }

  it('the default run compiles about half of the kernels of kernels/all.ts, each once', async () => {
    for (const variant of ['thread', 'subgroup'] as const) {
      const { device } = await requestGpu(navigator.gpu);
      try {
        if (variant === 'subgroup') requireFeature(device, 'subgroups');
        const trainer = await createTrainer(config({}), (s, params) => openGpuBackend(device, s, params, { kernelVariant: variant }));
        const made = pipelineCounts(device);
        console.info(`[pipelines] default run, ${variant} variant: ${made.async} compiled ahead, ${made.sync} at a bind`);
        expect(made.async).toBeGreaterThan(15);
        expect(made.async).toBeLessThan(30);
        trainer.destroy();
      } finally {
        device.destroy();
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
