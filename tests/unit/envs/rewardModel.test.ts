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
