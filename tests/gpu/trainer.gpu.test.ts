/**
 * Whole training iterations through the shared trainer on the GPU backend against the CPU backend,
 * same config and seed: the same tokens are sampled and the same metrics come out.
 */
import { describe, expect, it } from 'vitest';
import { defaultConfig, withFieldText, type RunConfig } from '../../workers/core/config';
import { createCpuBackend } from '../../workers/core/cpuBackend';
import { createGpuBackend } from '../../workers/core/gpuBackend';
import { SCALAR_METRICS, type MetricRow } from '../../workers/core/metrics';
import { createTrainer, type Trainer } from '../../workers/core/trainer';
import { dumpBatch } from '../../workers/formats/batchDump';
import { requireFeature, requireGpuHandle } from '../helpers/requireGpu';
import type { KernelVariant } from '../../kernels/selectors';

function config(overrides: Record<string, string>): RunConfig {
  let cfg = defaultConfig();
  for (const [k, v] of Object.entries(overrides)) cfg = withFieldText(cfg, k, v);
  return cfg;
}

async function runBoth(cfg: RunConfig, iters: number, kernelVariant: KernelVariant) {
  const gpu = await requireGpuHandle();
  if (kernelVariant === 'subgroup') requireFeature(gpu.device, 'subgroups');
  const g = await createTrainer(cfg, (shape, params) => createGpuBackend(gpu.device, shape, params, { label: gpu.label, kernelVariant }));
  const c = await createTrainer(cfg, createCpuBackend);
  const rows: Array<[MetricRow, MetricRow]> = [];
  for (let i = 0; i < iters; i++) rows.push([await g.step(), await c.step()]);
  return { g, c, rows };
}

async function sampledTokens(t: Trainer): Promise<number[][]> {
  return (await dumpBatch(t)).trajs.map((tr) => tr.tokens.map((x) => x.tok));
}

// Metrics are means of f32 quantities computed in different orders (GPU tree reductions vs CPU
// f64 loops); after Adam steps the parameters differ by ~1e-6 relative, so 1e-3 is ample.
const ATOL = 1e-3;

// Both kernel variants (kernels/selectors.ts): SwiftShader gets the thread one by default.
for (const kernelVariant of ['thread', 'subgroup'] as const) describe(`trainer: GPU backend (${kernelVariant} kernels) vs CPU backend`, () => {
  it('one iteration at defaults (small batch): same tokens, same metrics', async () => {
    const { g, c, rows } = await runBoth(config({ batch: '4', group: '4', seed: '5' }), 1, kernelVariant);
    expect(await sampledTokens(g)).toEqual(await sampledTokens(c));
    const [rg, rc] = rows[0]!;
    for (const k of SCALAR_METRICS) {
      if (k === 'ms') continue;
      expect(Math.abs(rg[k] - rc[k]), `${k}: gpu ${rg[k]} cpu ${rc[k]}`).toBeLessThanOrEqual(ATOL * Math.max(1, Math.abs(rc[k])));
    }
    expect(rg.adv_hist).toEqual(rc.adv_hist);
    expect(rg.ratio_hist).toEqual(rc.ratio_hist);
    const pg = await g.backend.readParams();
    const pc = await c.backend.readParams();
    let maxErr = 0;
    for (let i = 0; i < pg.length; i++) maxErr = Math.max(maxErr, Math.abs(pg[i]! - pc[i]!));
    expect(maxErr).toBeLessThan(1e-4);
    g.destroy();
  });

  it('three iterations with 2 epochs x 2 minibatches and KL: ratios move, both backends agree', async () => {
    const cfg = config({ batch: '2', group: '4', seed: '8', epochs: '2', minibatches: '2', klCoef: '0.05', lr: '0.02', 'model.hidden': '16' });
    const { g, c, rows } = await runBoth(cfg, 3, kernelVariant);
    expect(await sampledTokens(g)).toEqual(await sampledTokens(c));
    for (const [rg, rc] of rows) {
      for (const k of ['reward_mean', 'loss', 'ratio_mean', 'ratio_max', 'kl_ref', 'entropy', 'grad_norm', 'ess'] as const) {
        expect(Math.abs(rg[k] - rc[k]), `iter ${rc.iter} ${k}: gpu ${rg[k]} cpu ${rc[k]}`).toBeLessThanOrEqual(ATOL * Math.max(1, Math.abs(rc[k])));
      }
    }
    expect(rows.some(([, rc]) => rc.ratio_max !== 1)).toBe(true);
    g.destroy();
  });

  // PPO: GAE (critic.wgsl gae), the critic's update and whitening's three dispatches, in both variants.
  it('PPO (critic and GAE), 4 turns: same tokens, metrics and advantages over two iterations', async () => {
    let cfg = withFieldText(defaultConfig(), 'methods', 'ppo');
    for (const [k, v] of Object.entries({ batch: '3', group: '4', seed: '3', epochs: '2', 'env.maxTurns': '4', 'model.hidden': '16' })) cfg = withFieldText(cfg, k, v);
    const { g, c, rows } = await runBoth(cfg, 2, kernelVariant);
    for (const [rg, rc] of rows) {
      for (const k of SCALAR_METRICS) {
        if (k === 'ms') continue;
        expect(Math.abs(rg[k] - rc[k]), `iter ${rc.iter} ${k}: gpu ${rg[k]} cpu ${rc[k]}`).toBeLessThanOrEqual(ATOL * Math.max(1, Math.abs(rc[k])));
      }
    }
    const [dg, dc] = [await dumpBatch(g), await dumpBatch(c)];
    expect(dg.trajs.map((t) => t.tokens.map((x) => x.tok))).toEqual(dc.trajs.map((t) => t.tokens.map((x) => x.tok)));
    const advG = dg.trajs.flatMap((t) => t.tokens.map((x) => x.adv));
    const advC = dc.trajs.flatMap((t) => t.tokens.map((x) => x.adv));
    expect(advC.some((a) => a !== 0)).toBe(true);
    advC.forEach((a, j) => expect(Math.abs(advG[j]! - a), `adv ${j}`).toBeLessThanOrEqual(ATOL * Math.max(1, Math.abs(a))));
    g.destroy();
  });
});
