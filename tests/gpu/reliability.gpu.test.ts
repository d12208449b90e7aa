/**
 * Faults on a real WebGPU device: NaN detection and roll-back, a lost device mid-run, limits
 * refused up front, and bitwise determinism of two runs.
 */
import { describe, expect, it } from 'vitest';
import type { TrainerEvent } from '../../workers/entry/api';
import { defaultConfig, withFieldText, type RunConfig } from '../../workers/core/config';
import { createEnv } from '../../workers/core/envs';
import { createGpuBackend, openGpuBackend } from '../../workers/core/gpuBackend';
import type { MetricRow } from '../../workers/core/metrics';
import { buildShape, createTrainer, initialParams, NonFiniteError } from '../../workers/core/trainer';
import { createTrainerApi } from '../../workers/entry/trainerApi';
import { requireGpuHandle } from '../helpers/requireGpu';

function cfg(overrides: Record<string, string> = {}): RunConfig {
  let c = defaultConfig();
  for (const [k, v] of Object.entries({ batch: '2', group: '4', 'model.hidden': '16', seed: '6', ...overrides })) c = withFieldText(c, k, v);
  return c;
}
const noMs = (r: MetricRow) => ({ ...r, ms: 0 });

async function gpuTrainer(c: RunConfig, snapshotEvery = 2) {
  const g = await requireGpuHandle();
  return createTrainer(c, (shape, params) => createGpuBackend(g.device, shape, params, { label: g.label }), { snapshotEvery });
}

describe('GPU reliability', () => {
  it('a NaN injected into the parameters is flagged on the GPU, named, and rolled back', async () => {
    const t = await gpuTrainer(cfg());
    for (let i = 0; i < 3; i++) await t.step();
    t.backend.injectNaN();
    const e = (await t.step().catch((x: unknown) => x)) as NonFiniteError;
    expect(e).toBeInstanceOf(NonFiniteError);
    // The NaN embedding reaches the gradients (x * da) and stays in the parameters. The loss may
    // stay finite on a GPU: WGSL's clamp() (in tanh and the log-ratio) may turn a NaN into a bound.
    expect(e.quantities).toEqual(expect.arrayContaining(['gradients', 'parameters']));
    expect(e.rolledBackTo).toBe(2);
    const params = await t.backend.readParams();
    expect(params.every(Number.isFinite)).toBe(true);
    const row = await t.step();
    expect(row.iter).toBe(3);
    expect(Number.isFinite(row.loss) && Number.isFinite(row.grad_norm)).toBe(true);
    t.destroy();
  });

  it('a validation error in a turn is named with the call, and the next turn works (the readback buffer is left unmapped)', async () => {
    const g = await requireGpuHandle();
    const t = await gpuTrainer(cfg());
    await t.step();
    // A "driver bug": the next command encoder also copies from a buffer without COPY_SRC usage.
    const bad = g.device.createBuffer({ size: 16, usage: GPUBufferUsage.COPY_DST });
    const sink = g.device.createBuffer({ size: 16, usage: GPUBufferUsage.COPY_DST });
    const create = g.device.createCommandEncoder.bind(g.device);
    g.device.createCommandEncoder = (d?: GPUCommandEncoderDescriptor) => {
      const enc = create(d);
      enc.copyBufferToBuffer(bad, 0, sink, 0, 16);
      return enc;
    };
    try {
      await expect(t.backend.sampleTurn(0, 1)).rejects.toThrow(/^gpu backend: sampleTurn: .*CopySrc/is);
    } finally {
      g.device.createCommandEncoder = create;
    }
    const tokens = await t.backend.sampleTurn(0, 2);
    expect(tokens.length).toBeGreaterThan(0);
    const row = await t.step();
    expect(Number.isFinite(row.loss) && Number.isFinite(row.grad_norm)).toBe(true);
    bad.destroy();
    sink.destroy();
    t.destroy();
  });

  it('two runs with the same config and seed give identical metrics (no order-dependent float atomics)', async () => {
    const run = async () => {
      const t = await gpuTrainer(cfg({ epochs: '2', minibatches: '2' }));
      const rows: MetricRow[] = [];
      for (let i = 0; i < 3; i++) rows.push(noMs(await t.step()));
      const p = await t.backend.readParams();
      t.destroy();
      return { rows, p };
    };
    const a = await run();
    const b = await run();
    expect(b.rows).toEqual(a.rows);
    expect(Array.from(b.p)).toEqual(Array.from(a.p));
  });

  it('a device lost mid-run (device.destroy()) is replaced; the run continues with no iteration lost or duplicated', async () => {
    const c = cfg();
    const reference = createTrainerApi(navigator.gpu);
    await reference.configure(c, 'gpu');
    const expected: MetricRow[] = [];
    for (let i = 0; i < 6; i++) expected.push(noMs(await reference.step()));
    await reference.dispose();

    const api = createTrainerApi(navigator.gpu);
    const info = await api.configure(c, 'gpu');
    expect(info.kind).toBe('gpu');
    const events: TrainerEvent[] = [];
    await api.subscribe((e) => events.push(e));
    const got: MetricRow[] = [];
    for (let i = 0; i < 3; i++) got.push(noMs(await api.step()));
    await api.debug('lose-device');
    for (let i = 0; i < 3; i++) got.push(noMs(await api.step()));
    expect(got.map((r) => r.iter)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(got).toEqual(expected);
    const lost = events.filter((e) => e.type === 'device-lost');
    expect(lost).toHaveLength(1);
    expect(lost[0]).toMatchObject({ type: 'device-lost', iter: 4 });
    await api.dispose();
  });

  it('a batch beyond the device limits is refused up front, naming the limit', async () => {
    // A fresh adapter (one adapter gives one device) and a device with the default limits.
    const adapter = await navigator.gpu.requestAdapter();
    const small = await adapter!.requestDevice({ label: 'default limits' });
    const c = cfg({ batch: '1024', group: '64', 'model.hidden': '64' });
    const env = createEnv(c);
    const shape = buildShape(c, env);
    await expect(openGpuBackend(small, shape, initialParams(c, env))).rejects.toThrow(/storage-buffer limit/);
    small.destroy();
  });
});
