/**
 * What VCPO's per-trajectory gradient norm (kernels/model/trajGradNorm.ts) costs the CPU backend:
 * VCPO with stale rollouts at its default (gradNorm = reference), each iteration timed, and right
 * after it trajGradNormCpu alone on that iteration's batch and parameters, so that a busy machine
 * slows both alike; at the default batch and at 8x. Prints one JSON line per scale: medians, and
 * the norm's median share of an iteration (the iteration includes it once). The reference and
 * proxy runs are not timed against each other: their batches diverge after the first update.
 *
 *   npx tsx --import ./cli/registerRaw.mjs bench/vcpoGradNorm.ts [ITERS]
 */
import { performance } from 'node:perf_hooks';
import { forwardCpu } from '../kernels/model/mlp';
import { trajGradNormCpu } from '../kernels/model/trajGradNorm';
import { defaultConfig, withFieldText, type RunConfig } from '../workers/core/config';
import { createCpuBackend } from '../workers/core/cpuBackend';
import { createTrainer } from '../workers/core/trainer';

const iters = Number(process.argv[2] ?? 12);
if (!(iters >= 2)) throw new Error(`ITERS: expected a number >= 2, got "${process.argv[2]}"`);

function config(set: Record<string, string>): RunConfig {
  let cfg = defaultConfig();
  for (const [k, v] of Object.entries(set)) cfg = withFieldText(cfg, k, v);
  return cfg;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

for (const [scale, extra] of [['default', {}], ['8x batch', { batch: String(8 * defaultConfig().batch) }]] as const) {
  const set = { methods: 'vcpo', staleness: '2', seed: '1', ...extra };
  const t = await createTrainer(config(set), createCpuBackend);
  const { shape } = t;
  const [iterMs, normMs, share] = [[] as number[], [] as number[], [] as number[]];
  for (let i = 0; i < iters; i++) {
    const t0 = performance.now();
    await t.step();
    const t1 = performance.now();
    const b = t.lastBatch!;
    const params = (await t.snapshotNow()).state.params;
    const f = forwardCpu(params, shape.dims, b.seq, shape.L, shape.trainRowPos, shape.grammar, shape.temperature);
    const t2 = performance.now();
    trajGradNormCpu({ params, dims: shape.dims, seq: b.seq, L: shape.L, rowPos: shape.trainRowPos, h: f.h, z: f.z, mask: b.mask, temperature: shape.temperature, logIS: new Float32Array(shape.N), isCap: 8 }, shape.Tp);
    const t3 = performance.now();
    if (i === 0) continue; // compilation
    iterMs.push(t1 - t0);
    normMs.push(t3 - t2);
    share.push((t3 - t2) / (t1 - t0));
  }
  console.log(JSON.stringify({
    scale, rollouts: shape.N, rows: shape.N * shape.Tp, dims: shape.dims,
    iterationMs: +median(iterMs).toFixed(1), trajGradNormMs: +median(normMs).toFixed(1), share: +median(share).toFixed(2),
  }));
  t.destroy();
}
