/**
 * The rollout's sampler as a run setting (docs/METHODS.md 5.19): the rollout draws its tokens and
 * gets their log-probs through the sampler's precision and truncation, the trainer keeps f32 and
 * the whole distribution. On-policy (1 epoch, 1 minibatch, no staleness) PPO's ratio is then still
 * exactly 1, as in verl's decoupled mode, and the mismatch is logpOld - logpRollout.
 */
import { describe, expect, it } from 'vitest';
import { defaultConfig, withFieldText, type RunConfig } from '../../workers/core/config';
import { createCpuBackend } from '../../workers/core/cpuBackend';
import { createTrainer } from '../../workers/core/trainer';
import type { BatchTensors } from '../../workers/core/backend';
import { offpolicyMetrics } from '../../kernels/stats/mismatch';
import { expm1s, k3s, mismatchStatsCpu } from '../../kernels/stats/mismatchStats';
import { histBin } from '../../kernels/stats/stats';
import { LOGRATIO_HIST_RANGE } from '../../kernels/stats/histograms';

function cfgOf(set: Record<string, string>): RunConfig {
  let cfg = defaultConfig();
  for (const [k, v] of Object.entries({ batch: '4', group: '4', seed: '5', ...set })) cfg = withFieldText(cfg, k, v);
  return cfg;
}

async function lastBatch(set: Record<string, string>, iters = 2): Promise<{ t: BatchTensors; mask: Float32Array }> {
  const trainer = await createTrainer(cfgOf(set), createCpuBackend);
  for (let i = 0; i < iters; i++) await trainer.step();
  return { t: await trainer.backend.readBatch(), mask: trainer.lastBatch!.mask };
}

const masked = (mask: Float32Array) => [...mask.keys()].filter((i) => mask[i] !== 0);

describe('the rollout sampler', () => {
  it('with the defaults the rollout log-probs are the old ones, bit for bit, and every ratio is 1', async () => {
    const { t, mask } = await lastBatch({});
    const rows = masked(mask);
    expect(rows.length).toBeGreaterThan(10);
    for (const i of rows) {
      expect(Object.is(t.logpRollout[i], t.logpOld[i])).toBe(true);
      expect(t.ratio[i]).toBe(1);
    }
  });

  it('bf16 logits: the rollout log-probs differ from the trainer\'s, the PPO ratio stays 1', async () => {
    const { t, mask } = await lastBatch({ 'rollout.precision': 'bf16' });
    const rows = masked(mask);
    const lr = rows.map((i) => t.logpOld[i]! - t.logpRollout[i]!);
    expect(lr.filter((x) => x !== 0).length).toBeGreaterThan(rows.length / 2);
    // bf16 keeps 8 bits of a logit: the toy model's logits (|z| < ~10) move by at most ~2^-5.
    expect(Math.max(...lr.map(Math.abs))).toBeLessThan(0.1);
    for (const i of rows) expect(t.ratio[i]).toBe(1);
  });

  it('top-p: every drawn token is in the nucleus, so its rollout log-prob is at least the trainer\'s', async () => {
    const { t, mask } = await lastBatch({ 'rollout.topP': '0.8' });
    const rows = masked(mask);
    const lr = rows.map((i) => t.logpOld[i]! - t.logpRollout[i]!);
    // lr = log(kept mass) <= 0, up to f32 rounding of the two log-probs.
    expect(Math.max(...lr)).toBeLessThan(1e-5);
    expect(Math.min(...lr)).toBeLessThan(-0.05);
    for (const i of rows) expect(t.ratio[i]).toBe(1);
  });

  it('top-k 1 is greedy: each drawn token is the sampler\'s only one, log-prob 0', async () => {
    const { t, mask } = await lastBatch({ 'rollout.topK': '1' });
    for (const i of masked(mask)) expect(t.logpRollout[i]).toBe(0);
  });
});

describe('the mismatch metrics', () => {
  it('the defaults measure none: zeros, a perplexity ratio of 1, every token in the bin of 0', async () => {
    const trainer = await createTrainer(cfgOf({}), createCpuBackend);
    const row = await trainer.step();
    expect([row.mismatch_logratio, row.mismatch_k3_kl, row.mismatch_chi2_token, row.mismatch_chi2_seq]).toEqual([0, 0, 0, 0]);
    expect(row.mismatch_ppl_ratio).toBe(1);
    const zeroBin = histBin(0, LOGRATIO_HIST_RANGE[0], LOGRATIO_HIST_RANGE[1]);
    expect(row.mismatch_hist![zeroBin]).toBe(row.tokens);
    expect(row.mismatch_hist!.reduce((a, b) => a + b, 0)).toBe(row.tokens);
  });

  for (const [name, set] of [['bf16', { 'rollout.precision': 'bf16' }], ['top-p 0.8', { 'rollout.topP': '0.8' }], ['fp16 and top-k 3', { 'rollout.precision': 'fp16', 'rollout.topK': '3' }]] as const) {
    it(`${name}: the row's metrics are verl's rollout_corr diagnostics of the batch`, async () => {
      const trainer = await createTrainer(cfgOf(set), createCpuBackend);
      await trainer.step();
      const row = await trainer.step();
      const t = await trainer.backend.readBatch();
      const mask = trainer.lastBatch!.mask;
      const Tp = trainer.shape.Tp;
      // verl's batch holds only rows with tokens: drop the others before its row means.
      const live = [...Array(mask.length / Tp).keys()].filter((n) => mask.subarray(n * Tp, (n + 1) * Tp).some((m) => m !== 0));
      const pick = (a: Float32Array) => Float32Array.from(live.flatMap((n) => [...a.subarray(n * Tp, (n + 1) * Tp)]));
      const v = offpolicyMetrics(pick(t.logpOld), pick(t.logpRollout), pick(mask), Tp);
      const close = (a: number, b: number) => expect(Math.abs(a - b), `${a} vs ${b}`).toBeLessThanOrEqual(1e-9 + 1e-6 * Math.abs(b));
      close(row.mismatch_logratio, -v.kl);
      close(row.mismatch_k3_kl, v.k3_kl);
      close(row.mismatch_chi2_token, v.chi2_token);
      close(row.mismatch_chi2_seq, v.chi2_seq);
      close(row.mismatch_ppl_ratio, v.ppl_ratio);
      expect(row.mismatch_hist!.reduce((a, b) => a + b, 0)).toBe(row.tokens);
      expect(row.mismatch_logratio).not.toBe(0);
      // The sampler's row is the same whatever computes it: the reference on the dump's tensors.
      expect(mismatchStatsCpu({ mask, logpOld: t.logpOld, logpRollout: t.logpRollout, Tp }).mismatch_hist).toEqual(row.mismatch_hist);
    });
  }

  it('the polynomials near 0 are exp(x) - 1 and exp(x) - 1 - x', () => {
    for (const x of [-0.124, -1e-3, -1e-7, 0, 1e-7, 1e-3, 0.1249]) {
      expect(Math.abs(expm1s(x) - Math.expm1(x))).toBeLessThanOrEqual(1e-7 * Math.abs(Math.expm1(x)) + 1e-300);
      const k3 = Math.expm1(x) - x;
      expect(Math.abs(k3s(x) - k3)).toBeLessThanOrEqual(1e-6 * k3 + 1e-18);
    }
    expect(k3s(0.5)).toBeCloseTo(Math.exp(0.5) - 1.5, 12);
  });
});
