/**
 * The GPU backend against the CPU backend on one RunShape of the search task: a full episode
 * driven by the environment (sampleTurn / writeTurn) on each, then update(); twice, so Adam's step
 * counter carries across updates. Sampled tokens must be identical; statistics, batch tensors and
 * parameters close. Also counts the GPU work: one submit and one readback per sampleTurn and per
 * update, and the dispatches of each.
 * Tolerances: Adam moves each parameter by about lr * g / (|g| + eps) per step, so the f32-vs-f64
 * relative error of a gradient entry becomes an absolute parameter error of up to lr times it; for
 * entries that are small cancelling sums (|g| ~ 1e-7, relative error up to ~1e-3) that is ~1e-5 at
 * lr = 0.01 (1.1e-5 seen): params atol 5e-5, rtol 1e-4. Statistics and per-token tensors come from
 * forward passes of those parameters: atol 5e-5, rtol 5e-4.
 */
import { ADVANTAGE_DEFAULTS, groupLayout } from '../../kernels/advantage/advantage';
import { CONFIG_SELECTORS } from '../../kernels/selectors';
import { turnsTaken } from '../../workers/core/collect';
import { afterEach, describe, expect, it } from 'vitest';
import { paramLayout, initParams, type MlpDims } from '../../kernels/model/mlp';
import { STATS_FIELDS } from '../../kernels/stats/stats';
import { makeRowTables, type Backend, type RunShape, type UpdateStats } from '../../workers/core/backend';
import { createCpuBackend } from '../../workers/core/cpuBackend';
import { createSearchEnv } from '../../workers/core/envs/search';
import { PAD, type TaskEnv } from '../../workers/core/envs/types';
import { createGpuBackend } from '../../workers/core/gpuBackend';
import { dispatchCounts } from '../../workers/core/update/stages';
import { createRng } from '../../workers/core/rng';
import { expectClose, expectEqualArrays } from '../helpers/expectClose';
import { requireFeature, requireGpuHandle } from '../helpers/requireGpu';

function buildShape(env: TaskEnv, prompts: number, group: number, dims: MlpDims): RunShape {
  const { promptLen, actionLen, obsLen, maxTurns } = env.layout;
  const N = prompts * group;
  const L = promptLen + maxTurns * (actionLen + obsLen);
  const tables = makeRowTables({ N, L, promptLen, actionLen, obsLen, maxTurns });
  return {
    dims, N, group, groupCap: group, L, Tp: maxTurns * actionLen, actionLen, obsLen, promptLen, maxTurns,
    ...tables,
    grammar: env.grammar,
    minibatches: [[0, N / 2], [N / 2, N]],
    seed: 7,
    temperature: 1,
    epochs: 2,
    optim: { beta1: 0.9, beta2: 0.999, eps: 1e-8, maxGradNorm: 1 },
    loss: { ratio: { mode: 'token', clipLow: 0.2, clipHigh: 0.28, dualClip: 3 }, klCoef: 0.05, klType: 'k3', agg: 'seq-mean-token-mean' },
    adv: { ...ADVANTAGE_DEFAULTS, unbiasedStd: false, otb: false, zeroTail: false },
    whiten: false,
    nRoles: 1,
    essLr: { enabled: false, rule: 'sqrt', rhoBase: 1 },
    staleness: 0,
    scoreContexts: 0,
    scoreSpan: 0,
    igType: 'prob_diff',
    critic: null,
    sft: false,
  };
}

/** Seq-mean-token-mean weights per minibatch (what workers/core/lossAgg.ts gives for that mode). */
function weightsFor(shape: RunShape, mask: Float32Array): Float32Array {
  const w = new Float32Array(mask.length);
  for (const [n0, n1] of shape.minibatches) {
    for (let n = n0; n < n1; n++) {
      let len = 0;
      for (let j = 0; j < shape.Tp; j++) len += mask[n * shape.Tp + j]!;
      for (let j = 0; j < shape.Tp; j++) if (mask[n * shape.Tp + j]) w[n * shape.Tp + j] = 1 / ((n1 - n0) * Math.max(len, 1));
    }
  }
  return w;
}

/** One iteration the way the trainer drives a backend; returns the tokens sampled per turn. */
async function iteration(b: Backend, env: TaskEnv, shape: RunShape, iter: number) {
  const { N, L, Tp, actionLen, obsLen, promptLen } = shape;
  const episodes = env.sample(N / shape.group, shape.group, createRng(99).fork(iter));
  const seq = new Int32Array(N * L).fill(PAD);
  for (let n = 0; n < N; n++) seq.set(episodes.prompt.subarray(n * promptLen, (n + 1) * promptLen), n * L);
  b.writeSequences(seq);
  const mask = new Float32Array(N * Tp);
  const sampled: Int32Array[] = [];
  const w = actionLen + obsLen;
  for (let turn = 0; turn < shape.maxTurns; turn++) {
    const actions = await b.sampleTurn(turn, iter);
    sampled.push(actions);
    const res = episodes.step(turn, actions);
    const block = new Int32Array(N * w);
    for (let n = 0; n < N; n++) {
      for (let a = 0; a < actionLen; a++) {
        const keep = res.actionMask[n * actionLen + a]!;
        block[n * w + a] = keep ? actions[n * actionLen + a]! : PAD;
        mask[n * Tp + turn * actionLen + a] = keep;
      }
      block.set(res.obs.subarray(n * obsLen, (n + 1) * obsLen), n * w + actionLen);
    }
    b.writeTurn(turn, block);
  }
  // Env reward plus seeded noise, so that groups differ and the gradient is not zero.
  const noise = createRng(1000 + iter);
  const rewards = Float32Array.from(episodes.reward, (r) => r + 0.5 * noise.next());
  const turns = Uint32Array.from({ length: N }, (_, n) => turnsTaken(mask, n, shape));
  const T = shape.maxTurns;
  const adv = {
    reward: rewards,
    ...groupLayout(Array.from({ length: N / shape.group }, () => shape.group)),
    turns,
    turnReward: new Float32Array(N * T),
    turnRole: new Int32Array(N * T).fill(-1),
    turnKey: new Uint32Array(N * T),
    roleRewards: new Float32Array(N),
  };
  const stats = await b.update({ iter, lr: 0.01, adv, mask, weights: weightsFor(shape, mask) });
  return { sampled, stats, mask };
}

/** Counts submits, readbacks and dispatches while `fn` runs. */
async function counting<T>(fn: () => Promise<T>) {
  const q = GPUQueue.prototype;
  const bp = GPUBuffer.prototype;
  const pp = GPUComputePassEncoder.prototype;
  const orig = { submit: q.submit, mapAsync: bp.mapAsync, dispatch: pp.dispatchWorkgroups };
  const n = { submits: 0, readbacks: 0, dispatches: 0 };
  q.submit = function (this: GPUQueue, ...a: Parameters<GPUQueue['submit']>) {
    n.submits++;
    return orig.submit.apply(this, a);
  };
  bp.mapAsync = function (this: GPUBuffer, ...a: Parameters<GPUBuffer['mapAsync']>) {
    n.readbacks++;
    return orig.mapAsync.apply(this, a);
  };
  pp.dispatchWorkgroups = function (this: GPUComputePassEncoder, ...a: Parameters<GPUComputePassEncoder['dispatchWorkgroups']>) {
    n.dispatches++;
    return orig.dispatch.apply(this, a);
  };
  try {
    return { value: await fn(), n };
  } finally {
    q.submit = orig.submit;
    bp.mapAsync = orig.mapAsync;
    pp.dispatchWorkgroups = orig.dispatch;
  }
}

const STATS_TOL = { atol: 5e-5, rtol: 5e-4 };
const PARAMS_TOL = { atol: 5e-5, rtol: 1e-4 };

/** Seeded weights with a larger output layer than the default init, so the first policy is far from uniform. */
function farFromUniform(dims: MlpDims): Float32Array {
  const p0 = initParams(dims, createRng(5));
  const L = paramLayout(dims);
  const r = createRng(6);
  for (let i = L.w2; i < L.w2 + dims.H * dims.V; i++) p0[i] = r.normal() * 0.5;
  return p0;
}

function compareStats(g: UpdateStats, c: UpdateStats, name: string) {
  expect(g.tokens).toBe(c.tokens);
  expectEqualArrays(g.adv_hist, c.adv_hist, `${name} adv_hist`);
  expectEqualArrays(g.ratio_hist, c.ratio_hist, `${name} ratio_hist`);
  const keys = [...STATS_FIELDS.filter((k) => k !== 'tokens'), 'grad_norm'] as const;
  expectClose(keys.map((k) => g[k]), keys.map((k) => c[k]), { ...STATS_TOL, label: `${name} stats` });
}

describe('GPU backend matches the CPU backend on the search task', () => {
  const made: Backend[] = [];
  afterEach(() => {
    for (const b of made.splice(0)) b.destroy();
  });

  it('N = 2 prompts x 4 group, K 4, D 4, H 8: tokens, stats, batch and params after two updates', async () => {
    const gpu = await requireGpuHandle();
    const env = createSearchEnv({ entities: 3, attributes: 2, values: 4, maxTurns: 2 });
    const dims: MlpDims = { V: env.vocab.length, K: 4, D: 4, H: 8 };
    const shape = buildShape(env, 2, 4, dims);
    const p0 = farFromUniform(dims);
    const cpu = createCpuBackend(shape, p0);
    const gb = createGpuBackend(gpu.device, shape, p0, { label: gpu.label });
    made.push(cpu, gb);
    expect(gb.kind).toBe('gpu');
    expect(gb.label).toBe(gpu.label);
    expectEqualArrays(await gb.readParams(), p0, 'initial params');

    for (const iter of [1, 2]) {
      const c = await iteration(cpu, env, shape, iter);
      const { value: g, n } = await counting(() => iteration(gb, env, shape, iter));
      const expectDispatch = dispatchCounts(shape);
      // A turn: the rollout policy's embedProject, then (forward (two: hidden, logits), sample)
      // per action slot. 2 epochs x 2 minibatches: old and ref embedProject + forward (two) +
      // tokenStats, trajStats, advantage, essScale per minibatch (two); 15 dispatches per optimizer
      // step (embedProject and forward, then headGrad, slotGrad and gradNorm two each) less the first
      // step's embedProject and forward; stats (two), the crash diagnosis (one) and the finite checks (one).
      expect(expectDispatch).toEqual({ sampleTurn: 1 + 3 * shape.actionLen, update: 12 + 15 * 4 - 3 + 4 });
      // maxTurns sampleTurns + 1 update; readParams is outside.
      expect(n.submits).toBe(shape.maxTurns + 1);
      expect(n.readbacks).toBe(shape.maxTurns + 1);
      expect(n.dispatches).toBe(shape.maxTurns * expectDispatch.sampleTurn + expectDispatch.update);
      g.sampled.forEach((t, turn) => expectEqualArrays(t, c.sampled[turn]!, `iter ${iter} turn ${turn} tokens`));
      compareStats(g.stats, c.stats, `iter ${iter}`);
      expect(c.stats.tokens).toBeGreaterThan(0);
      expect(c.stats.grad_norm).toBeGreaterThan(0);

      const [gB, cB] = [await gb.readBatch(), await cpu.readBatch()];
      expectEqualArrays(gB.seq, cB.seq, `iter ${iter} seq`);
      expectEqualArrays(gB.clip, cB.clip, `iter ${iter} clip`);
      // Rows the loss ignores (mask 0) may hold PAD tokens the grammar forbids: log-probs of -1e30.
      for (const k of ['logp', 'logpOld', 'logpRef', 'entropy', 'sumP2', 'adv', 'ratio', 'loss'] as const) {
        expectClose(gB[k], cB[k], { ...STATS_TOL, label: `iter ${iter} batch ${k}` });
      }
      expectClose(await gb.readParams(), await cpu.readParams(), { ...PARAMS_TOL, label: `iter ${iter} params` });
    }
  });

  it('OTB: its two passes are counted, and its advantages match the CPU backend', async () => {
    const gpu = await requireGpuHandle();
    const env = createSearchEnv({ entities: 3, attributes: 2, values: 4, maxTurns: 2 });
    const dims: MlpDims = { V: env.vocab.length, K: 4, D: 4, H: 8 };
    const base = buildShape(env, 2, 4, dims);
    const shape: RunShape = { ...base, adv: { ...base.adv, otb: true } };
    const p0 = initParams(dims, createRng(5));
    const cpu = createCpuBackend(shape, p0);
    const gb = createGpuBackend(gpu.device, shape, p0, { label: gpu.label });
    made.push(cpu, gb);
    const plain = dispatchCounts(base);
    const expectDispatch = dispatchCounts(shape);
    expect(expectDispatch).toEqual({ sampleTurn: plain.sampleTurn, update: plain.update + 1 });
    for (const iter of [1, 2]) {
      const c = await iteration(cpu, env, shape, iter);
      const { value: g, n } = await counting(() => iteration(gb, env, shape, iter));
      expect(n.dispatches).toBe(shape.maxTurns * expectDispatch.sampleTurn + expectDispatch.update);
      g.sampled.forEach((t, turn) => expectEqualArrays(t, c.sampled[turn]!, `iter ${iter} turn ${turn} tokens`));
      compareStats(g.stats, c.stats, `OTB iter ${iter}`);
      const [gB, cB] = [await gb.readBatch(), await cpu.readBatch()];
      expectClose(gB.adv, cB.adv, { ...STATS_TOL, label: `OTB iter ${iter} adv` });
    }
  });

  it("VCPO's per-trajectory gradient norms: three more dispatches, and g2 and advantages as the CPU backend's", async () => {
    const gpu = await requireGpuHandle();
    const env = createSearchEnv({ entities: 3, attributes: 2, values: 4, maxTurns: 2 });
    const dims: MlpDims = { V: env.vocab.length, K: 4, D: 4, H: 8 };
    const base = buildShape(env, 2, 4, dims);
    const opob = { ...base.adv, estimator: 'opob' as const, unbiasedStd: false, eps: 0, stdMin: 1e-8, isCap: 8 };
    const shape: RunShape = { ...base, adv: { ...opob, trueGradNorm: true } };
    const p0 = farFromUniform(dims);
    const cpu = createCpuBackend(shape, p0);
    const gb = createGpuBackend(gpu.device, shape, p0, { label: gpu.label });
    made.push(cpu, gb);
    const expectDispatch = dispatchCounts(shape);
    expect(expectDispatch).toEqual({ sampleTurn: dispatchCounts(base).sampleTurn, update: dispatchCounts({ ...base, adv: opob }).update + 3 });
    for (const iter of [1, 2]) {
      const c = await iteration(cpu, env, shape, iter);
      const { value: g, n } = await counting(() => iteration(gb, env, shape, iter));
      expect(n.dispatches).toBe(shape.maxTurns * expectDispatch.sampleTurn + expectDispatch.update);
      g.sampled.forEach((t, turn) => expectEqualArrays(t, c.sampled[turn]!, `iter ${iter} turn ${turn} tokens`));
      compareStats(g.stats, c.stats, `VCPO iter ${iter}`);
      const [gB, cB] = [await gb.readBatch(), await cpu.readBatch()];
      expect(cB.g2.some((x) => x > 0)).toBe(true);
      expectClose(gB.g2, cB.g2, { ...STATS_TOL, label: `VCPO iter ${iter} g2` });
      expectClose(gB.adv, cB.adv, { ...STATS_TOL, label: `VCPO iter ${iter} adv` });
    }
  });

  // Whitening: three dispatches (block moments, their combination, the rows) in both variants.
  for (const kernelVariant of ['thread', 'subgroup'] as const) {
    it(`REINFORCE++ with whitening (${kernelVariant} variant): its dispatches counted, advantages as the CPU backend's`, async () => {
      const gpu = await requireGpuHandle();
      if (kernelVariant === 'subgroup') requireFeature(gpu.device, 'subgroups');
      const env = createSearchEnv({ entities: 3, attributes: 2, values: 4, maxTurns: 2 });
      const dims: MlpDims = { V: env.vocab.length, K: 4, D: 4, H: 8 };
      const base = buildShape(env, 2, 4, dims);
      const shape: RunShape = { ...base, adv: { ...base.adv, estimator: 'reinforce' }, whiten: true };
      const p0 = initParams(dims, createRng(5));
      const cpu = createCpuBackend(shape, p0);
      const gb = createGpuBackend(gpu.device, shape, p0, { label: gpu.label, kernelVariant });
      made.push(cpu, gb);
      const expectDispatch = dispatchCounts(shape);
      expect(expectDispatch.update).toBe(dispatchCounts(base).update + 3);
      for (const iter of [1, 2]) {
        const c = await iteration(cpu, env, shape, iter);
        const { value: g, n } = await counting(() => iteration(gb, env, shape, iter));
        expect(n.dispatches).toBe(shape.maxTurns * expectDispatch.sampleTurn + expectDispatch.update);
        g.sampled.forEach((t, turn) => expectEqualArrays(t, c.sampled[turn]!, `iter ${iter} turn ${turn} tokens`));
        compareStats(g.stats, c.stats, `REINFORCE++ iter ${iter}`);
        const [gB, cB] = [await gb.readBatch(), await cpu.readBatch()];
        expect(cB.adv.some((a) => a !== 0)).toBe(true);
        expectClose(gB.adv, cB.adv, { ...STATS_TOL, label: `REINFORCE++ iter ${iter} whitened adv` });
      }
    });
  }

  // The subgroup variant compiles the run's group size into advantage (kernels/selectors.ts advantageGroupSize):
  // GRPO's statistics then take meanStdFixed.
  it('GRPO in the subgroup variant, the group size compiled into advantage: advantages as the CPU backend\'s', async () => {
    const gpu = await requireGpuHandle();
    requireFeature(gpu.device, 'subgroups');
    const env = createSearchEnv({ entities: 3, attributes: 2, values: 4, maxTurns: 2 });
    const dims: MlpDims = { V: env.vocab.length, K: 4, D: 4, H: 8 };
    const shape = buildShape(env, 4, 5, dims);
    expect(CONFIG_SELECTORS.advantageGroupSize.pick('subgroup', { vocab: shape.dims.V, group: shape.group })).toBe(5);
    const p0 = initParams(dims, createRng(5));
    const cpu = createCpuBackend(shape, p0);
    const gb = createGpuBackend(gpu.device, shape, p0, { label: gpu.label, kernelVariant: 'subgroup' });
    made.push(cpu, gb);
    for (const iter of [1, 2]) {
      const c = await iteration(cpu, env, shape, iter);
      const g = await iteration(gb, env, shape, iter);
      g.sampled.forEach((t, turn) => expectEqualArrays(t, c.sampled[turn]!, `iter ${iter} turn ${turn} tokens`));
      compareStats(g.stats, c.stats, `GRPO subgroup iter ${iter}`);
      const [gB, cB] = [await gb.readBatch(), await cpu.readBatch()];
      expect(cB.adv.some((a) => a !== 0)).toBe(true);
      expectClose(gB.adv, cB.adv, { ...STATS_TOL, label: `GRPO subgroup iter ${iter} adv` });
    }
  });

  it('default-sized model (K 8, D 16, H 64), 4 prompts x 8 group, 3 turns, 1 epoch', async () => {
    const gpu = await requireGpuHandle();
    const env = createSearchEnv({ entities: 6, attributes: 3, values: 8, maxTurns: 3 });
    const dims: MlpDims = { V: env.vocab.length, K: 8, D: 16, H: 64 };
    const shape = { ...buildShape(env, 4, 8, dims), epochs: 1, minibatches: [[0, 32]] as Array<[number, number]> };
    const p0 = initParams(dims, createRng(11));
    const cpu = createCpuBackend(shape, p0);
    const gb = createGpuBackend(gpu.device, shape, p0, { label: gpu.label });
    made.push(cpu, gb);
    const c = await iteration(cpu, env, shape, 3);
    const g = await iteration(gb, env, shape, 3);
    g.sampled.forEach((t, turn) => expectEqualArrays(t, c.sampled[turn]!, `turn ${turn} tokens`));
    compareStats(g.stats, c.stats, 'default-sized');
    expectClose(await gb.readParams(), await cpu.readParams(), { ...PARAMS_TOL, label: 'default-sized params' });
  });

  it('rejects wrong input sizes and overlapping calls with clear errors', async () => {
    const gpu = await requireGpuHandle();
    const env = createSearchEnv({ entities: 2, attributes: 1, values: 2, maxTurns: 1 });
    const dims: MlpDims = { V: env.vocab.length, K: 2, D: 2, H: 4 };
    const shape = buildShape(env, 1, 2, dims);
    const gb = createGpuBackend(gpu.device, shape, initParams(dims, createRng(1)));
    made.push(gb);
    expect(() => gb.writeSequences(new Int32Array(3))).toThrow(/expected/);
    await expect(gb.sampleTurn(5, 1)).rejects.toThrow(/turn 5/);
    const a = gb.readParams();
    await expect(gb.readParams()).rejects.toThrow(/before the previous call finished/);
    await a;
    expect(() => createGpuBackend(gpu.device, shape, new Float32Array(3))).toThrow(/parameters/);
  });
});
