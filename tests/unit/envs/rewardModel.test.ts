import { describe, expect, it } from 'vitest';
import { createBatchState, rewardModelStd } from '../../../workers/core/envs/common';
import { createSequenceEnv } from '../../../workers/core/envs/sequence';
import { createRng } from '../../../workers/core/rng';
import { rollout } from './rollout';

describe('noisy reward-model channel (PF-PPO)', () => {
  it('std peaks at mid-range and falls to the floor at the extremes', () => {
    const o = { rmNoise: 0.4, rmNoiseFloor: 0.25 };
    expect(rewardModelStd(0.5, 0, 1, o)).toBeCloseTo(0.4, 12);
    expect(rewardModelStd(0, 0, 1, o)).toBeCloseTo(0.1, 12);
    expect(rewardModelStd(1, 0, 1, o)).toBeCloseTo(0.1, 12);
    expect(rewardModelStd(0.25, 0, 1, o)).toBeCloseTo(0.4 * (0.25 + 0.75 * 0.75), 12);
    expect(rewardModelStd(3, -1, 1, o)).toBeCloseTo(0.1, 12); // clamped to the range
    expect(rewardModelStd(0.5, 0, 1, { rmNoise: 0, rmNoiseFloor: 0.25 })).toBe(0);
  });

  it('reward = true reward + N(0, std(r)^2): mean and std within bounds; rewardTrue kept exact', () => {
    const N = 20000;
    const st = createBatchState({ N, rm: { rmNoise: 0.5, rmNoiseFloor: 0.2 }, rewardRange: [0, 1], rng: createRng(7), maxTurns: 1, actionLen: 1 });
    const rTrue = (n: number) => [0, 0.5, 1][n % 3]!;
    for (let n = 0; n < N; n++) st.finish(n, rTrue(n), rTrue(n) === 1);
    for (const r of [0, 0.5, 1]) {
      const xs: number[] = [];
      for (let n = 0; n < N; n++) if (rTrue(n) === r) xs.push(st.reward[n]! - r);
      const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
      const sd = Math.sqrt(xs.reduce((s, x) => s + (x - mean) ** 2, 0) / xs.length);
      const want = r === 0.5 ? 0.5 : 0.1;
      expect(Math.abs(mean)).toBeLessThan((5 * want) / Math.sqrt(xs.length));
      expect(Math.abs(sd / want - 1)).toBeLessThan(0.05);
    }
    for (let n = 0; n < N; n++) expect(st.rewardTrue[n]).toBe(rTrue(n));
  });

  it('on a task: off by default (reward = rewardTrue); on, deterministic by seed and success untouched', () => {
    const base = { symbols: 2, seqLen: 2, targets: 4, seqReward: 'partial' as const, seed: 1 };
    const off = rollout(createSequenceEnv(base), createSequenceEnv(base).sample(8, 8, createRng(1)), createRng(2)).batch;
    expect(Array.from(off.reward)).toEqual(Array.from(off.rewardTrue));
    const env = createSequenceEnv({ ...base, rmNoise: 0.3, rmNoiseFloor: 0.1 });
    const a = rollout(env, env.sample(8, 8, createRng(1)), createRng(2)).batch;
    const b = rollout(env, env.sample(8, 8, createRng(1)), createRng(2)).batch;
    expect(Array.from(a.reward)).toEqual(Array.from(b.reward));
    expect(Array.from(a.rewardTrue)).toEqual(Array.from(off.rewardTrue));
    expect(Array.from(a.success)).toEqual(Array.from(off.success));
    expect(Array.from(a.reward)).not.toEqual(Array.from(a.rewardTrue));
  });
});

describe('unsure reward model (env.rmUnsure): reliable at extreme scores, noisy in the middle', () => {
  it('a share rmUnsure of the rollouts get a score from the middle half of the range; the others their reward', () => {
    const N = 20000;
    const st = createBatchState({ N, rm: { rmNoise: 0, rmNoiseFloor: 0, rmUnsure: 0.3 }, rewardRange: [-1, 1], rng: createRng(9), maxTurns: 1, actionLen: 1 });
    for (let n = 0; n < N; n++) st.finish(n, n % 2 ? 1 : -1, n % 2 === 1);
    let unsure = 0;
    for (let n = 0; n < N; n++) {
      const r = st.reward[n]!;
      if (r === st.rewardTrue[n]) continue;
      unsure++;
      expect(r).toBeGreaterThanOrEqual(-0.5);
      expect(r).toBeLessThanOrEqual(0.5);
    }
    expect(Math.abs(unsure / N - 0.3)).toBeLessThan(5 * Math.sqrt((0.3 * 0.7) / N));
    // Extreme scores come only from rollouts it was sure of: there they are the true reward.
    for (let n = 0; n < N; n++) if (Math.abs(st.reward[n]!) > 0.5) expect(st.reward[n]).toBe(st.rewardTrue[n]);
  });

  it('off by default and at 0: the noise stream of rmNoise is unchanged', () => {
    const make = (rmUnsure?: number) => {
      const st = createBatchState({ N: 64, rm: { rmNoise: 0.5, rmNoiseFloor: 0.2, ...(rmUnsure === undefined ? {} : { rmUnsure }) }, rewardRange: [0, 1], rng: createRng(5), maxTurns: 1, actionLen: 1 });
      for (let n = 0; n < 64; n++) st.finish(n, (n % 3) / 2, false);
      return Array.from(st.reward);
    };
    expect(make(0)).toEqual(make());
    expect(make(0.5)).not.toEqual(make());
  });

  it('search, unread: only answers that no search result showed may get an unsure score', async () => {
    const { createSearchEnv } = await import('../../../workers/core/envs/search');
    const env = createSearchEnv({ entities: 3, attributes: 2, values: 8, maxTurns: 3, rmUnsure: 1, rmUnsureOn: 'unread' });
    const batch = env.sample(64, 4, createRng(3));
    const { seqs } = rollout(env, batch, createRng(4));
    const V = env.vocab;
    let unread = 0;
    for (let n = 0; n < batch.size; n++) {
      const words = seqs[n]!.map((t) => V[t]);
      const at = words.indexOf('ANSWER');
      const shown = new Set(words.flatMap((w, i) => (w === 'RES' ? [words[i + 1]] : [])));
      if (at >= 0 && !shown.has(words[at + 1])) {
        unread++;
        expect(batch.reward[n]).toBeGreaterThanOrEqual(0.25);
        expect(batch.reward[n]).toBeLessThanOrEqual(0.75);
      } else expect(batch.reward[n]).toBe(batch.rewardTrue[n]);
    }
    // Both kinds occur in the batch, so neither branch above is vacuous.
    expect(unread).toBeGreaterThan(10);
    expect(unread).toBeLessThan(batch.size - 10);
  });
});
