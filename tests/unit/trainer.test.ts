import { describe, expect, it } from 'vitest';
import { backwardCpu, forwardCpu, initParams, paramLayout } from '../../kernels/model/mlp';
import { logitGradCpu } from '../../kernels/softmax/logitGrad';
import { tokenStatsCpu } from '../../kernels/softmax/tokenStats';
import { defaultConfig, withFieldText, type RunConfig } from '../../workers/core/config';
import { createCpuBackend } from '../../workers/core/cpuBackend';
import { createSearchEnv } from '../../workers/core/envs/search';
import type { MetricRow } from '../../workers/core/metrics';
import { createRng } from '../../workers/core/rng';
import { createTrainer } from '../../workers/core/trainer';
import { createTrainerApi } from '../../workers/entry/trainerApi';
import { dumpBatch, unpackBatch } from '../../workers/formats/batchDump';

function smallConfig(overrides: Record<string, string> = {}): RunConfig {
  let cfg = defaultConfig();
  for (const [k, v] of Object.entries({ batch: '4', group: '4', 'model.hidden': '16', ...overrides })) cfg = withFieldText(cfg, k, v);
  return cfg;
}

describe('MLP backward (CPU reference)', () => {
  it('matches central finite differences of sum_r c_r logp_r for every parameter', () => {
    const env = createSearchEnv({ entities: 3, attributes: 2, values: 4, maxTurns: 2 });
    const V = env.vocab.length;
    const dims = { V, K: 4, D: 3, H: 5 };
    const rng = createRng(3);
    const p = initParams(dims, rng);
    for (let i = 0; i < p.length; i++) p[i]! += 0.3 * rng.normal();
    const L = 8;
    const seq = new Int32Array(3 * L);
    for (let i = 0; i < seq.length; i++) seq[i] = 1 + rng.int(V - 1);
    const rowPos = Uint32Array.from([2, 3, 5, 9, 12, 15, 17, 22]);
    // A grammar that masks a third of the tokens but always allows the sampled one.
    const gram = new Uint8Array(V * V).fill(1);
    for (let i = 0; i < V * V; i += 3) gram[i] = 0;
    for (const pos of rowPos) gram[seq[pos - 1]! * V + seq[pos]!] = 1;
    const coef = Float32Array.from(rowPos, () => rng.normal());
    const T = 0.7;
    const lossOf = (q: Float32Array) => {
      const f = forwardCpu(q, dims, seq, L, rowPos, gram, T);
      const s = tokenStatsCpu(f.z, V, seq, rowPos);
      return s.logp.reduce((acc, lp, r) => acc + coef[r]! * lp, 0);
    };
    const f = forwardCpu(p, dims, seq, L, rowPos, gram, T);
    const g = backwardCpu(p, dims, seq, L, rowPos, f.h, logitGradCpu(f.z, V, seq, rowPos, coef, T));
    expect(g.length).toBe(paramLayout(dims).size);
    // h = 1e-2 in f32 parameters: truncation error O(h^2) ~ 1e-4, rounding ~ 1e-7 / h = 1e-5.
    let maxErr = 0;
    for (let i = 0; i < p.length; i++) {
      const q = Float32Array.from(p);
      const h = 1e-2;
      q[i] = p[i]! + h;
      const lp = lossOf(q);
      q[i] = p[i]! - h;
      const lm = lossOf(q);
      maxErr = Math.max(maxErr, Math.abs((lp - lm) / (2 * h) - g[i]!));
    }
    expect(maxErr).toBeLessThan(2e-3);
  });
});

describe('trainer on the CPU backend', () => {
  it('is reproducible from its config and seed', async () => {
    const runOnce = async () => {
      const t = await createTrainer(smallConfig({ seed: '3' }), createCpuBackend);
      const rows: MetricRow[] = [];
      for (let i = 0; i < 3; i++) rows.push({ ...(await t.step()), ms: 0 });
      return { rows, params: await t.backend.readParams() };
    };
    const a = await runOnce();
    const b = await runOnce();
    expect(b.rows).toEqual(a.rows);
    expect(Array.from(b.params)).toEqual(Array.from(a.params));
    const c = await createTrainer(smallConfig({ seed: '4' }), createCpuBackend);
    expect((await c.step()).reward_mean === a.rows[0]!.reward_mean && (await c.backend.readParams())[0] === a.params[0]).toBe(false);
  });

  it('several epochs and minibatches move ratios away from 1 and clip some tokens', async () => {
    const t = await createTrainer(smallConfig({ epochs: '4', minibatches: '2', lr: '0.05', seed: '2' }), createCpuBackend);
    let clipped = 0;
    let spread = 0;
    for (let i = 0; i < 4; i++) {
      const r = await t.step();
      clipped += r.clip_frac;
      spread += r.ratio_max - r.ratio_min;
      expect(Number.isFinite(r.loss) && Number.isFinite(r.grad_norm)).toBe(true);
    }
    expect(spread).toBeGreaterThan(0);
    expect(clipped).toBeGreaterThan(0);
  });

  it('on-policy single epoch: every ratio is exactly 1', async () => {
    const t = await createTrainer(smallConfig(), createCpuBackend);
    const r = await t.step();
    expect([r.ratio_min, r.ratio_mean, r.ratio_max]).toEqual([1, 1, 1]);
    expect(r.clip_frac).toBe(0);
    expect(r.ess).toBeCloseTo(1, 6);
  });

  it('records the batch dump contract, with masks matching the policy tokens', async () => {
    const t = await createTrainer(smallConfig(), createCpuBackend);
    await t.step();
    const d = await dumpBatch(t);
    expect(d.trajs).toHaveLength(16);
    for (const tr of d.trajs) {
      expect(['SEARCH', 'ANSWER']).toContain(tr.tokens[0]!.text);
      expect(tr.reward === 0 || tr.reward === 1).toBe(true);
    }
  });
});

describe('createTrainerApi (the worker API without a worker)', () => {
  it('falls back to the CPU when there is no WebGPU and says so; trains, pauses, resets', async () => {
    const api = createTrainerApi(undefined);
    const info = await api.configure(smallConfig(), 'auto');
    expect(info.kind).toBe('cpu');
    expect(info.fallbackReason).toBe('this browser has no WebGPU');
    await expect(createTrainerApi(undefined).configure(smallConfig(), 'gpu')).rejects.toThrow(/WebGPU is not available/);

    const first = await api.step();
    expect(first.iter).toBe(1);
    const batches: MetricRow[][] = [];
    await api.start((rows) => batches.push(rows), 4);
    expect(batches.flat().map((r) => r.iter)).toEqual([2, 3, 4]);
    expect(await api.describeTrajectory(0)).toMatchObject({ group: 0 });
    expect(await api.describeTrajectory(999)).toBeNull();

    // start() runs until pause(); pause resolves after the current iteration.
    const seen: number[] = [];
    const running = api.start((rows) => seen.push(...rows.map((r) => r.iter)));
    await new Promise((r) => setTimeout(r, 50));
    await api.pause();
    await running;
    const after = seen.length;
    await new Promise((r) => setTimeout(r, 50));
    expect(seen.length).toBe(after);

    await api.reset();
    expect((await api.step()).iter).toBe(1);
    await api.dispose();
  });

  it('hands out the last batch packed and as its JSON file; neither before the first iteration', async () => {
    const api = createTrainerApi(undefined);
    await api.configure(smallConfig({ seed: '6' }), 'cpu');
    expect(await api.packBatch()).toBeNull();
    expect(await api.batchJson()).toBeNull();
    await api.step();
    await api.step();
    const dump = unpackBatch((await api.packBatch())!);
    expect(dump.iter).toBe(2);
    expect(dump.trajs).toHaveLength(16);
    const blob = (await api.batchJson())!;
    expect(blob.type).toBe('application/json');
    // The file the CLI's --dump-batch writes, to the byte.
    expect(await blob.text()).toBe(JSON.stringify(dump, null, 1));
    await api.dispose();
  });
});
