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
