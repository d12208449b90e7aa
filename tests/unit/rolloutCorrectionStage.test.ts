/**
 * The rollout correction in the update (workers/core/update/correctionStages.ts, docs/METHODS.md
 * 5.19) on the CPU backend: with the trainer's own sampler every entry changes nothing, bit for
 * bit; with a bf16, top-k sampler the trainer's loss is the reference's weights and mask composed
 * with the aggregation and the surrogate, and a batch dump carries enough to recompute them.
 */
import { describe, expect, it } from 'vitest';
import { rolloutCorrection } from '../../kernels/loss/rolloutCorrection';
import { ppoLossCpu } from '../../kernels/loss/ppoLoss';
import { defaultConfig, withFieldText, withMethods, type RunConfig } from '../../workers/core/config';
import { createCpuBackend } from '../../workers/core/cpuBackend';
import { aggregationWeights } from '../../workers/core/lossAgg';
import { resolvePlan } from '../../workers/core/plan';
import type { RunShape, UpdateInput } from '../../workers/core/backend';
import { createTrainer } from '../../workers/core/trainer';
import { correctBatch } from '../../workers/core/update/correctionStages';
import { dumpBatch, type BatchDump } from '../../workers/formats/batchDump';

const ENTRIES = ['tis', 'seqis', 'tokenrs', 'seqrs', 'geors', 'veto'] as const;
const SMALL = { batch: '4', group: '4', 'model.hidden': '16', seed: '2' };
/** A sampler far enough from the trainer that every entry weighs or rejects something. */
const MISMATCHED = { 'rollout.precision': 'bf16', 'rollout.topK': '3' };

function cfgOf(methods: string, extra: Record<string, string> = {}): RunConfig {
  let cfg = withFieldText(defaultConfig(), 'methods', methods);
  for (const [k, v] of Object.entries({ ...SMALL, ...extra })) cfg = withFieldText(cfg, k, v);
  return cfg;
}

async function train(cfg: RunConfig, iters: number) {
  const t = await createTrainer(cfg, createCpuBackend);
  const rows = [];
  for (let i = 0; i < iters; i++) {
    const { ms: _ms, ...row } = await t.step();
    rows.push(row);
  }
  return { t, rows, params: await t.backend.readParams() };
}

/**
 * The dump's tokens as [N * T] rows (T the longest trajectory's policy tokens): the sampler's and
 * the trainer's log-probs and the collected mask, which is all the reference needs (its row sums,
 * means and maxima do not depend on where a row's padding is).
 */
function dumpRows(d: BatchDump) {
  const N = d.trajs.length;
  const T = Math.max(1, ...d.trajs.map((t) => t.tokens.length));
  const logpOld = new Float64Array(N * T);
  const logpRollout = new Float64Array(N * T);
  const mask = new Float64Array(N * T);
  d.trajs.forEach((t, n) =>
    t.tokens.forEach((k, j) => {
      logpOld[n * T + j] = k.logp_old;
      logpRollout[n * T + j] = k.logp_rollout!;
      mask[n * T + j] = 1;
    }),
  );
  return { N, T, logpOld, logpRollout, mask };
}

describe('with the trainer as its sampler, every correction changes nothing', () => {
  for (const id of ENTRIES) {
    it(`grpo,${id}: the same metrics and parameters as grpo alone over 3 iterations`, async () => {
      const a = await train(cfgOf('grpo'), 3);
      const b = await train(cfgOf(`grpo,${id}`), 3);
      expect(b.rows).toEqual(a.rows);
      expect(Buffer.from(b.params.buffer).equals(Buffer.from(a.params.buffer))).toBe(true);
      const toks = (await dumpBatch(b.t)).trajs.flatMap((t) => t.tokens);
      expect(toks.every((k) => k.is_weight === 1 && k.rs_keep === 1)).toBe(true);
    });
  }
});

describe('with a bf16, top-3 sampler, the loss is the reference composed', () => {
  for (const id of ENTRIES) {
    it(`grpo,${id}: the dump's weights and keeps are the reference's, the loss w·c·(−A) over the kept tokens`, async () => {
      // The veto's default (ρ < 1e-4) never fires on this toy's ratios; at 0.9 it does.
      const cfg = cfgOf(`grpo,${id}`, { ...MISMATCHED, ...(id === 'veto' ? { 'veto.tau': '0.9' } : {}) });
      const { t } = await train(cfg, 1);
      const d = await dumpBatch(t);
      const r = dumpRows(d);
      const corr = rolloutCorrection(r.logpOld, r.logpRollout, r.mask, r.T, resolvePlan(d.config).rolloutCorrection!);
      const toks = d.trajs.flatMap((tr) => tr.tokens);
      const flat = (a: ArrayLike<number>) => d.trajs.flatMap((tr, n) => tr.tokens.map((_, j) => a[n * r.T + j]!));
      const want = corr.weights ? flat(corr.weights) : toks.map(() => 1);
      toks.forEach((k, i) => expect(Math.abs(k.is_weight! - want[i]!), `is_weight ${i}`).toBeLessThanOrEqual(1e-6 * Math.max(1, want[i]!)));
      expect(toks.map((k) => k.rs_keep)).toEqual(flat(corr.mask));
      // Each entry acts on this batch: a weight off 1, or a token rejected.
      expect(toks.some((k) => k.is_weight !== 1 || k.rs_keep === 0)).toBe(true);
      // One epoch, one minibatch: the ratio is exactly 1, so each token's surrogate is −A; the
      // aggregation (GRPO's) is over the kept tokens, the KL coefficient 0.
      const plan = resolvePlan(d.config);
      expect(plan.kl.coef).toBe(0);
      const w = aggregationWeights(Float32Array.from(corr.mask), r.T, [[0, r.N]], plan.lossAgg);
      const expected = flat(w).map((wi, i) => Math.fround(wi) * Math.fround(want[i]!) * -toks[i]!.adv);
      toks.forEach((k, i) => expect(Math.abs(k.loss - expected[i]!), `loss ${i}`).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(expected[i]!))));
      const total = expected.reduce((s, x) => s + x, 0);
      expect(Math.abs(d.loss - total)).toBeLessThanOrEqual(1e-5 * Math.max(1, Math.abs(total)));
    });
  }

  it('the mismatch metrics stay over the collected mask, rejected tokens included', async () => {
    const a = await train(cfgOf('grpo', MISMATCHED), 1);
    const b = await train(cfgOf('grpo,seqrs', MISMATCHED), 1);
    expect(b.rows[0]!.mismatch_logratio).toBe(a.rows[0]!.mismatch_logratio);
    expect(b.rows[0]!.tokens).toBeLessThan(a.rows[0]!.tokens);
  });
});

describe('a hand-checked batch: two rollouts of two tokens', () => {
  // lr = ℓ_old − ℓ_μ: rollout 0 (0.5, 0), rollout 1 (1, 0); advantages all 1.
  const shape = { N: 2, Tp: 2, actionLen: 2, maxTurns: 1, minibatches: [[0, 2]], loss: { ratio: { mode: 'token' }, agg: 'token-mean' } } as unknown as RunShape;
  const inp = (): UpdateInput => ({ iter: 1, lr: 0, adv: null as never, mask: Float32Array.of(1, 1, 1, 1), weights: Float32Array.of(0.25, 0.25, 0.25, 0.25) });
  const logpOld = Float32Array.of(0, 0, 0, 0);
  const logpRollout = Float32Array.of(-0.5, 0, -1, 0);
  const lossOf = (c: ReturnType<typeof correctBatch>) =>
    ppoLossCpu(logpOld, logpOld, logpOld, Float32Array.of(1, 1, 1, 1), c.weights, { clipLow: 0.2, clipHigh: 0.2, dualClip: 3, klCoef: 0 }, undefined, c.lossIsWeight ?? undefined).loss.reduce((s, x) => s + x, 0);

  it('Token-TIS at C = 2: weights e^0.5, 1, 2 (truncated from e), 1; the loss −(e^0.5 + 1 + 2 + 1) / 4', () => {
    const c = correctBatch({ ...shape, correction: { rolloutIs: 'token', rolloutIsThreshold: 2, rolloutIsBatchNormalize: false, rolloutRs: null, rolloutRsThreshold: null, vetoThreshold: null } }, inp(), logpOld, logpRollout);
    expect(Array.from(c.lossIsWeight!)).toEqual(Array.from(Float32Array.of(Math.exp(0.5), 1, 2, 1)));
    expect(lossOf(c)).toBeCloseTo(-(Math.exp(0.5) + 4) / 4, 6);
  });
  it('Seq-MIS, 0.5 ≤ ∏ρ ≤ 2: rollout 1 (∏ρ = e) leaves the loss; token-mean then divides by 2 kept tokens', () => {
    const c = correctBatch({ ...shape, correction: { rolloutIs: null, rolloutIsThreshold: 2, rolloutIsBatchNormalize: false, rolloutRs: 'seq_sum_k1', rolloutRsThreshold: '0.5_2', vetoThreshold: null } }, inp(), logpOld, logpRollout);
    expect(Array.from(c.mask)).toEqual([1, 1, 0, 0]);
    expect(Array.from(c.weights)).toEqual([0.5, 0.5, 0, 0]);
    expect(lossOf(c)).toBeCloseTo(-1, 6);
  });
  it('Seq-TIS with GMPO: the loss takes each rollout’s geometric mean of its weights', () => {
    const geo = { ...shape, loss: { ...shape.loss, ratio: { mode: 'geometric' } } } as unknown as RunShape;
    const c = correctBatch({ ...geo, correction: { rolloutIs: 'token', rolloutIsThreshold: 2, rolloutIsBatchNormalize: false, rolloutRs: null, rolloutRsThreshold: null, vetoThreshold: null } }, inp(), logpOld, logpRollout);
    expect(c.lossIsWeight![0]).toBeCloseTo(Math.exp(0.25), 6);
    expect(c.lossIsWeight![2]).toBeCloseTo(Math.sqrt(2), 6);
    // The dump keeps the per-token weights.
    expect(c.isWeight[2]).toBe(2);
  });
});

describe('refusals say why', () => {
  it('two IS weights, VCPO, OTB and the forced-token methods', () => {
    expect(() => withMethods(defaultConfig(), ['grpo', 'tis', 'seqis'])).toThrow(/one rollout_is level/);
    expect(() => withMethods(defaultConfig(), ['vcpo', 'tis'])).toThrow(/counts it twice/);
    expect(() => withMethods(defaultConfig(), ['otb', 'seqis'])).toThrow(/squared IS weight/);
    expect(() => withMethods(defaultConfig(), ['grpo', 'geors', 'regft'])).toThrow(/not drawn by the sampler/);
    expect(() => withMethods(defaultConfig(), ['grpo', 'veto', 'edge'])).toThrow(/not drawn by the sampler/);
    // Rejections chain, with an IS level and with VCPO, OTB and PPO's critic.
    for (const set of [['grpo', 'tis', 'tokenrs', 'seqrs', 'geors', 'veto'], ['vcpo', 'seqrs'], ['otb', 'geors'], ['ppo', 'tis', 'seqrs']]) {
      expect(withMethods(defaultConfig(), set).methods).toEqual(set);
    }
  });
});
