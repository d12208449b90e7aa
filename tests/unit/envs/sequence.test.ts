import { describe, expect, it } from 'vitest';
import { createSequenceEnv, sequenceTargets, type SequenceOptions } from '../../../workers/core/envs/sequence';
import { createRng } from '../../../workers/core/rng';
import { allowedNames, rollout, withinBinomial } from './rollout';

const base: SequenceOptions = { symbols: 4, seqLen: 3, targets: 16, seqReward: 'exact', seed: 1 };

describe('sequence task (the collapse dial)', () => {
  const env = createSequenceEnv(base);

  it('vocabulary, layout and grammar: one turn of symbols', () => {
    expect(env.vocab.slice(0, 5)).toEqual(['·', '<s>', '✓', '✗', 'T0']);
    expect(env.vocab.length).toBe(4 + 16 + 4);
    expect(env.layout).toEqual({ promptLen: 2, actionLen: 3, obsLen: 1, maxTurns: 1 });
    expect(allowedNames(env, 'T5')).toEqual(['s0', 's1', 's2', 's3']);
    expect(allowedNames(env, 's2')).toEqual(['s0', 's1', 's2', 's3']);
  });

  it('hidden targets are fixed by the seed', () => {
    expect(Array.from(sequenceTargets(base))).toEqual(Array.from(sequenceTargets({ ...base })));
    expect(Array.from(sequenceTargets({ ...base, seed: 2 }))).not.toEqual(Array.from(sequenceTargets(base)));
  });

  it('exact reward: 1 for the target, 0 otherwise; partial: the share of matching positions', () => {
    const batch = env.sample(1, 2, createRng(3));
    const target = Array.from(batch.answerTokens!.subarray(0, 3));
    const wrong = [...target];
    wrong[1] = wrong[1] === env.vocab.indexOf('s0') ? env.vocab.indexOf('s1') : env.vocab.indexOf('s0');
    const res = batch.step(0, Int32Array.from([...target, ...wrong]));
    expect(Array.from(res.actionMask)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(Array.from(res.obs, (t) => env.vocab[t])).toEqual(['✓', '✗']);
    expect(Array.from(batch.reward)).toEqual([1, 0]);
    expect(Array.from(batch.done)).toEqual([1, 1]);
    expect(batch.describe(1)).toMatch(/^T\d+ \| s\d s\d s\d → ✗ \(2\/3 match\)$/);
    const partial = createSequenceEnv({ ...base, seqReward: 'partial' });
    const pb = partial.sample(1, 2, createRng(3));
    pb.step(0, Int32Array.from([...target, ...wrong]));
    expect(pb.reward[0]).toBe(1);
    expect(pb.reward[1]).toBeCloseTo(2 / 3, 6);
    expect(Array.from(pb.success)).toEqual([1, 0]);
  });

  it('a uniform policy matches with probability symbols^-length', () => {
    const small = createSequenceEnv({ ...base, symbols: 2, seqLen: 3 });
    const batch = small.sample(512, 8, createRng(5));
    rollout(small, batch, createRng(6));
    const k = batch.success.reduce((s, x) => s + x, 0);
    expect(withinBinomial(k, batch.size, 1 / 8)).toBe(true);
  });
});

describe('sequence task with filler (env.think: the policy controls its length)', () => {
  const think = createSequenceEnv({ ...base, think: 3 });

  it('think 0 is the plain task: same vocabulary, layout and grammar', () => {
    const plain = createSequenceEnv(base);
    const zero = createSequenceEnv({ ...base, think: 0 });
    expect(zero.vocab).toEqual(plain.vocab);
    expect(zero.layout).toEqual(plain.layout);
    expect(Array.from(zero.grammar)).toEqual(Array.from(plain.grammar));
  });

  it('filler only before the sequence; the action has room for the sequence and the filler', () => {
    expect(think.vocab[think.vocab.length - 1]).toBe('…');
    expect(think.layout.actionLen).toBe(3 + 3);
    expect(allowedNames(think, 'T5')).toEqual(['s0', 's1', 's2', 's3', '…']);
    expect(allowedNames(think, '…')).toEqual(['s0', 's1', 's2', 's3', '…']);
    expect(allowedNames(think, 's2')).toEqual(['s0', 's1', 's2', 's3']);
  });

  it('the sequence after the filler is what is scored; slots after it are unused; too much filler truncates it', () => {
    const batch = think.sample(1, 3, createRng(3));
    const target = Array.from(batch.answerTokens!.subarray(0, 3));
    expect(Array.from(batch.answerTokens!.subarray(3, 6))).toEqual([0, 0, 0]);
    expect(Array.from(batch.answerSpan!)).toEqual([1, 1, 1, 0, 0, 0]);
    const F = think.vocab.indexOf('…');
    const s0 = think.vocab.indexOf('s0');
    const rows = [
      [...target, s0, s0, s0], // no filler: 3 policy tokens
      [F, F, ...target, s0], // two filler tokens, then the target: 5 tokens
      [F, F, F, F, ...target.slice(0, 2)], // four filler tokens leave 2 slots: the last position is missing
    ];
    const res = batch.step(0, Int32Array.from(rows.flat()));
    expect(Array.from(res.actionMask)).toEqual([1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1]);
    expect(Array.from(batch.reward)).toEqual([1, 1, 0]);
    expect(Array.from(batch.success)).toEqual([1, 1, 0]);
    expect(batch.describe(1)).toMatch(/^T\d+ \| … … s\d s\d s\d → ✓ \(3\/3 match\)$/);
  });

  it('the oracle answers without filler', () => {
    const batch = think.sample(2, 2, createRng(4));
    const o = batch.oracle!(1, 0);
    expect(Array.from(o)).toEqual(Array.from(batch.answerTokens!.subarray(6, 12)));
  });
});
