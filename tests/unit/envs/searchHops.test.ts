import { describe, expect, it } from 'vitest';
import { createSearchEnv, searchNoiseAt, type SearchNoiseOptions } from '../../../workers/core/envs/search';
import { createRng } from '../../../workers/core/rng';
import { allowedNames, rollout, withinBinomial } from './rollout';

const base = { entities: 3, attributes: 2, values: 8, maxTurns: 3 };

describe('search: defaults are the original task', () => {
  it('explicit default knobs give the same vocabulary, grammar, prompts and answers as none', () => {
    const a = createSearchEnv(base);
    const b = createSearchEnv({ ...base, hops: 1, noise: 0, noiseSchedule: 'fixed', formatPenalty: 0, rmNoise: 0 });
    expect(b.vocab).toEqual(a.vocab);
    expect(Array.from(b.grammar)).toEqual(Array.from(a.grammar));
    const ba = rollout(a, a.sample(4, 8, createRng(3)), createRng(7));
    const bb = rollout(b, b.sample(4, 8, createRng(3), 150), createRng(7));
    expect(bb.seqs).toEqual(ba.seqs);
    expect(Array.from(bb.batch.reward)).toEqual(Array.from(ba.batch.reward));
    expect(Array.from(ba.batch.rewardTrue)).toEqual(Array.from(ba.batch.reward));
  });

  it('answerTokens hold ANSWER and the ground truth: answering them scores 1', () => {
    const env = createSearchEnv(base);
    const batch = env.sample(3, 2, createRng(4));
    expect(Array.from(batch.answerSpan!)).toEqual([0, 1, 0]);
    const res = batch.step(0, batch.answerTokens!);
    expect(Array.from(res.actionMask)).toEqual([1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0]);
    expect(Array.from(batch.success)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(batch.turns(0)).toEqual([{ turn: 0, policy: [batch.answerTokens![0], batch.answerTokens![1]], env: [], note: '✓' }]);
  });

  it('format penalty: no answer by the turn limit gives -penalty', () => {
    const env = createSearchEnv({ ...base, maxTurns: 1, formatPenalty: 0.5 });
    const id = (s: string) => env.vocab.indexOf(s);
    const batch = env.sample(1, 2, createRng(2));
    batch.step(0, Int32Array.from([id('SEARCH'), id('e0'), id('a0'), id('ANSWER'), id('v0'), 0]));
    expect(batch.reward[0]).toBe(-0.5);
    expect(batch.rewardTrue[0]).toBe(-0.5);
    expect(batch.reward[1] === 0 || batch.reward[1] === 1).toBe(true);
    expect(batch.describe(0)).toMatch(/turn limit$/);
  });
});

describe('search: two hops', () => {
  const env = createSearchEnv({ ...base, hops: 2 });
  const id = (s: string) => env.vocab.indexOf(s);

  it('adds relation tokens and an end-of-document token; the prompt reads Q e r a', () => {
    expect(env.vocab.slice(-3)).toEqual(['r0', 'r1', ';']);
    expect(env.layout).toEqual({ promptLen: 5, actionLen: 3, obsLen: 2, maxTurns: 3 });
    const batch = env.sample(1, 1, createRng(5));
    const p = Array.from(batch.prompt, (t) => env.vocab[t]!);
    expect(p[0]).toBe('<s>');
    expect(p[1]).toBe('Q');
    expect(p[2]).toMatch(/^e\d$/);
    expect(p[3]).toMatch(/^r\d$/);
    expect(p[4]).toMatch(/^a\d$/);
  });

  it('grammar: an entity takes an attribute or a relation; a turn starts after a value or `;`', () => {
    expect(allowedNames(env, 'e1')).toEqual(['a0', 'a1', 'r0', 'r1']);
    expect(allowedNames(env, ';')).toEqual(['SEARCH', 'ANSWER']);
    expect(allowedNames(env, 'v5')).toEqual(['SEARCH', 'ANSWER']);
    expect(allowedNames(env, 'a0')).toEqual(['SEARCH', 'ANSWER']);
    expect(allowedNames(env, 'SEARCH')).toEqual(['e0', 'e1', 'e2']);
  });

  it('follows the chain: the relation gives the bridge entity, its attribute gives the answer', () => {
    for (let seed = 0; seed < 20; seed++) {
      const batch = env.sample(1, 1, createRng(seed));
      const [, , e, r, a] = Array.from(batch.prompt);
      const r0 = batch.step(0, Int32Array.from([id('SEARCH'), e!, r!]));
      expect(env.vocab[r0.obs[0]!]).toMatch(/^e\d$/);
      expect(env.vocab[r0.obs[1]!]).toBe(';');
      const r1 = batch.step(1, Int32Array.from([id('SEARCH'), r0.obs[0]!, a!]));
      expect(env.vocab[r1.obs[0]!]).toBe('RES');
      expect(r1.obs[1]).toBe(batch.answerTokens![1]);
      batch.step(2, Int32Array.from([id('ANSWER'), r1.obs[1]!, 0]));
      expect(batch.reward[0]).toBe(1);
      expect(batch.describe(0)).toMatch(/^Q e\d r\d a\d \| SEARCH e\d r\d → e\d ; \| SEARCH e\d a\d → RES v\d \| ANSWER v\d ✓$/);
    }
  });

  it('a random policy rarely solves two hops (chance about 1/values)', () => {
    const batch = env.sample(64, 8, createRng(8));
    rollout(env, batch, createRng(9));
    const succ = batch.success.reduce((s, x) => s + x, 0);
    expect(succ / batch.size).toBeLessThan(0.2);
    expect(batch.done.every((d) => d === 1)).toBe(true);
  });
});

describe('search: simulated engine noise (ZeroSearch)', () => {
  it('curriculum: p_i = p_s + (b^(i/m) - 1)/(b - 1) (p_e - p_s), p_e once i >= m; fixed is p_e', () => {
    const o: SearchNoiseOptions = { noise: 0.5, noiseSchedule: 'exp', noiseStart: 0, noiseBase: 4, noiseIters: 200 };
    expect(searchNoiseAt(0, o)).toBe(0);
    expect(searchNoiseAt(100, o)).toBeCloseTo(1 / 6, 12);
    expect(searchNoiseAt(150, o)).toBeCloseTo(((Math.pow(4, 0.75) - 1) / 3) * 0.5, 12);
    expect(searchNoiseAt(200, o)).toBe(0.5);
    expect(searchNoiseAt(5000, o)).toBe(0.5);
    expect(searchNoiseAt(50, { ...o, noiseBase: 1 })).toBeCloseTo(0.125, 12);
    expect(searchNoiseAt(100, { ...o, noiseStart: 0.2 })).toBeCloseTo(0.2 + 0.3 / 3, 12);
    expect(searchNoiseAt(0, { ...o, noiseSchedule: 'fixed' })).toBe(0.5);
    // Monotone non-decreasing from p_s to p_e.
    let last = -1;
    for (let i = 0; i <= 220; i += 10) {
      const p = searchNoiseAt(i, o);
      expect(p).toBeGreaterThanOrEqual(last);
      last = p;
    }
  });

  it('the batch reports the p_i of its step, counted from 1 as ZeroSearch counts', () => {
    const o: SearchNoiseOptions = { noise: 0.5, noiseSchedule: 'exp', noiseStart: 0, noiseBase: 4, noiseIters: 200 };
    const env = createSearchEnv({ ...base, ...o });
    // The first batch (0 iterations done) is step 1: p_1 = (4^(1/200) - 1) / 3 * 0.5 > 0.
    expect(env.sample(1, 1, createRng(1), 0).info!.search_noise).toBeCloseTo(((Math.pow(4, 1 / 200) - 1) / 3) * 0.5, 12);
    expect(env.sample(1, 1, createRng(1), 0).info!.search_noise).toBeGreaterThan(0);
    expect(env.sample(1, 1, createRng(1), 99).info!.search_noise).toBeCloseTo(1 / 6, 12);
    expect(env.sample(1, 1, createRng(1), 300).info!.search_noise).toBe(0.5);
  });

  /** Searches the asked fact in every trajectory and counts wrong documents. */
  function noisyShare(noise: number, seed: number, N = 4096) {
    const env = createSearchEnv({ ...base, noise });
    const id = (s: string) => env.vocab.indexOf(s);
    const batch = env.sample(N / 8, 8, createRng(seed));
    const actions = new Int32Array(N * 3);
    for (let n = 0; n < N; n++) actions.set([id('SEARCH'), batch.prompt[n * 4 + 2]!, batch.prompt[n * 4 + 3]!], 3 * n);
    const res = batch.step(0, actions);
    let wrong = 0;
    for (let n = 0; n < N; n++) {
      expect(env.vocab[res.obs[2 * n]!]).toBe('RES');
      expect(env.vocab[res.obs[2 * n + 1]!]).toMatch(/^v\d$/);
      if (res.obs[2 * n + 1] !== batch.answerTokens![3 * n + 1]) wrong++;
    }
    return { wrong, N, batch, res };
  }

  it('each search is wrong with probability p (binomial bounds), always a value of the right kind', () => {
    for (const p of [0, 0.1, 0.3, 0.5]) {
      const { wrong, N } = noisyShare(p, 11);
      expect(withinBinomial(wrong, N, p)).toBe(true);
    }
    expect(noisyShare(1, 12).wrong).toBe(4096);
  });

  it('noise is deterministic by seed and marked in the trajectory text', () => {
    const a = noisyShare(0.3, 21, 256);
    const b = noisyShare(0.3, 21, 256);
    const c = noisyShare(0.3, 22, 256);
    expect(Array.from(a.res.obs)).toEqual(Array.from(b.res.obs));
    expect(Array.from(c.res.obs)).not.toEqual(Array.from(a.res.obs));
    const n = Array.from({ length: 256 }, (_, i) => i).find((i) => a.res.obs[2 * i + 1] !== a.batch.answerTokens![3 * i + 1])!;
    expect(a.batch.describe(n)).toMatch(/\(noisy\)$/);
    expect(a.batch.turns(n)[0]!.note).toBe('(noisy)');
  });
});
