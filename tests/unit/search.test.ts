import { describe, expect, it } from 'vitest';
import { createSearchEnv } from '../../workers/core/envs/search';
import { createRng } from '../../workers/core/rng';

const env = createSearchEnv({ entities: 3, attributes: 2, values: 5, maxTurns: 2 });
const id = (name: string) => env.vocab.indexOf(name);

describe('search task', () => {
  it('has the vocabulary and layout the policy is built on', () => {
    expect(env.vocab[0]).toBe('·');
    expect(env.vocab).toContain('SEARCH');
    expect(env.vocab.length).toBe(6 + 3 + 2 + 5);
    expect(env.layout).toEqual({ promptLen: 4, actionLen: 3, obsLen: 2, maxTurns: 2 });
  });

  it('grammar: a turn starts with SEARCH or ANSWER; SEARCH takes an entity then an attribute', () => {
    const V = env.vocab.length;
    const allowed = (prev: string) => env.vocab.filter((_, t) => env.grammar[id(prev) * V + t]);
    expect(allowed('a1')).toEqual(['SEARCH', 'ANSWER']);
    expect(allowed('v3')).toEqual(['SEARCH', 'ANSWER']);
    expect(allowed('SEARCH')).toEqual(['e0', 'e1', 'e2']);
    expect(allowed('e2')).toEqual(['a0', 'a1']);
    expect(allowed('ANSWER')).toEqual(['v0', 'v1', 'v2', 'v3', 'v4']);
    // Unconstrained rows allow everything, so no row is empty.
    expect(allowed('RES').length).toBe(V);
  });

  it('search returns the fact, the right answer scores 1, a wrong one 0', () => {
    const batch = env.sample(1, 2, createRng(5));
    const p = Array.from(batch.prompt.subarray(0, 4), (t) => env.vocab[t]);
    expect(p.slice(0, 2)).toEqual(['<s>', 'Q']);
    const [e, a] = [id(p[2]!), id(p[3]!)];
    // Both rollouts search the asked fact.
    const r0 = batch.step(0, Int32Array.from([id('SEARCH'), e, a, id('SEARCH'), e, a]));
    expect(Array.from(r0.actionMask)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(env.vocab[r0.obs[0]!]).toBe('RES');
    const value = r0.obs[1]!;
    const wrong = value === id('v0') ? id('v1') : id('v0');
    const r1 = batch.step(1, Int32Array.from([id('ANSWER'), value, 0, id('ANSWER'), wrong, 0]));
    expect(Array.from(r1.actionMask)).toEqual([1, 1, 0, 1, 1, 0]);
    expect(Array.from(batch.reward)).toEqual([1, 0]);
    expect(Array.from(batch.success)).toEqual([1, 0]);
    expect(Array.from(batch.done)).toEqual([1, 1]);
    expect(batch.describe(0)).toMatch(/SEARCH .* → RES v\d \| ANSWER v\d ✓/);
  });

  it('the turn limit ends an episode with reward 0; finished episodes ignore later actions', () => {
    const batch = env.sample(1, 1, createRng(9));
    const s = Int32Array.from([id('SEARCH'), id('e0'), id('a0')]);
    batch.step(0, s);
    expect(batch.done[0]).toBe(0);
    batch.step(1, s);
    expect(batch.done[0]).toBe(1);
    expect(batch.reward[0]).toBe(0);
    expect(batch.describe(0)).toMatch(/turn limit$/);
  });

  it('is deterministic by seed, shares a task within a group, and differs across groups', () => {
    const a = env.sample(4, 3, createRng(11));
    const b = env.sample(4, 3, createRng(11));
    expect(Array.from(a.prompt)).toEqual(Array.from(b.prompt));
    for (let g = 0; g < 4; g++) {
      for (let i = 1; i < 3; i++) {
        expect(Array.from(a.prompt.subarray((g * 3 + i) * 4, (g * 3 + i + 1) * 4))).toEqual(Array.from(a.prompt.subarray(g * 12, g * 12 + 4)));
      }
    }
    const c = env.sample(4, 3, createRng(12));
    expect(Array.from(c.prompt)).not.toEqual(Array.from(a.prompt));
  });
});
