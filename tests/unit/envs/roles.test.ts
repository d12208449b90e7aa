import { describe, expect, it } from 'vitest';
import { createRolesEnv, ROLE_NAMES } from '../../../workers/core/envs/roles';
import { createRng } from '../../../workers/core/rng';
import { allowedNames, rollout, withinBinomial } from './rollout';

const base = { entities: 3, attributes: 2, values: 8, roleScale: 1, roleOffset: 0 };

describe('roles task (planner and executor)', () => {
  const env = createRolesEnv(base);
  const id = (s: string) => env.vocab.indexOf(s);

  it('vocabulary, layout and roles', () => {
    expect(env.vocab.slice(0, 9)).toEqual(['·', '<s>', 'Q', '@P', '@X', 'TELL', 'LOOK', 'ANSWER', 'ok']);
    expect(env.layout).toEqual({ promptLen: 5, actionLen: 3, obsLen: 2, maxTurns: 3 });
    expect(env.roles).toEqual(ROLE_NAMES);
  });

  it('grammar: the role token fixes the move; a returned value opens the answer', () => {
    expect(allowedNames(env, '@P')).toEqual(['TELL']);
    expect(allowedNames(env, '@X')).toEqual(['LOOK']);
    expect(allowedNames(env, 'TELL')).toEqual(['e0', 'e1', 'e2']);
    expect(allowedNames(env, 'LOOK')).toEqual(['e0', 'e1', 'e2']);
    expect(allowedNames(env, 'e1')).toEqual(['a0', 'a1']);
    expect(allowedNames(env, 'v3')).toEqual(['ANSWER']);
    expect(allowedNames(env, 'ANSWER')).toEqual(['v0', 'v1', 'v2', 'v3', 'v4', 'v5', 'v6', 'v7']);
  });

  /** Plays: the planner tells the question (or `tell`), the executor looks up (or `look`), the planner answers what came back. */
  function play(scale: number, offset: number, opts: { tellWrong?: boolean; lookWrong?: boolean } = {}) {
    const e = createRolesEnv({ ...base, roleScale: scale, roleOffset: offset });
    const batch = e.sample(1, 1, createRng(4));
    const [, , qe, qa] = Array.from(batch.prompt);
    const other = (t: number) => (e.vocab[t] === 'e0' ? id('e1') : id('e0'));
    const tell = [id('TELL'), opts.tellWrong ? other(qe!) : qe!, qa!];
    const r0 = batch.step(0, Int32Array.from(tell));
    expect(Array.from(r0.obs, (t) => e.vocab[t])).toEqual(['ok', '@X']);
    const look = [id('LOOK'), opts.lookWrong ? other(tell[1]!) : tell[1]!, tell[2]!];
    const r1 = batch.step(1, Int32Array.from(look));
    expect(e.vocab[r1.obs[0]!]).toBe('@P');
    const r2 = batch.step(2, Int32Array.from([id('ANSWER'), r1.obs[1]!, 0]));
    expect(Array.from(r2.actionMask)).toEqual([1, 1, 0]);
    return batch;
  }

  it('all as asked: both roles rewarded; the trajectory reward is their mean', () => {
    const b = play(1, 0);
    expect(Array.from(b.roleReward!)).toEqual([1, 1]);
    expect(b.reward[0]).toBe(1);
    expect(b.success[0]).toBe(1);
    expect(Array.from(b.turnRole!)).toEqual([0, 1, 0]);
    expect(b.turns(0).map((t) => t.role)).toEqual(['planner', 'executor', 'planner']);
    expect(b.describe(0)).toMatch(/^Q e\d a\d \| planner: TELL e\d a\d → ok @X \| executor: LOOK e\d a\d → @P v\d \(as told\) \| planner: ANSWER v\d ✓$/);
  });

  it('role reward scale and offset act on the executor only', () => {
    const b = play(5, 0.5);
    expect(Array.from(b.roleReward!)).toEqual([1, 5.5]);
    expect(b.reward[0]).toBe(3.25);
    expect(b.rewardTrue[0]).toBe(3.25);
    // The planner told the wrong fact and the executor followed it: neither looked up the asked fact.
    const w = play(5, 0.5, { tellWrong: true });
    expect(w.roleReward![1]).toBe(0.5);
    expect(w.roleReward![0]).toBe(w.success[0]! / 2);
    expect(w.describe(0)).toMatch(/\(as told\)/);
    // The planner told the right fact, the executor looked up another: offset only; the planner keeps its half.
    const n = play(5, 0.5, { lookWrong: true });
    expect(n.roleReward![1]).toBe(0.5);
    expect(n.roleReward![0]).toBe(0.5 + n.success[0]! / 2);
    expect(n.describe(0)).toMatch(/\(not as told\)/);
  });

  it('a uniform policy: the executor looks up the asked fact 1 time in entities * attributes', () => {
    const batch = env.sample(256, 8, createRng(21));
    rollout(env, batch, createRng(22));
    let followed = 0;
    for (let n = 0; n < batch.size; n++) followed += batch.roleReward![2 * n + 1]!;
    expect(withinBinomial(followed, batch.size, 1 / 6)).toBe(true);
    expect(batch.done.every((d) => d === 1)).toBe(true);
    expect(Array.from(batch.answerSpan!)).toEqual([0, 1, 0]);
  });

  it('is deterministic by seed', () => {
    const a = rollout(env, env.sample(4, 4, createRng(1)), createRng(2));
    const b = rollout(env, env.sample(4, 4, createRng(1)), createRng(2));
    expect(b.seqs).toEqual(a.seqs);
    expect(Array.from(b.batch.roleReward!)).toEqual(Array.from(a.batch.roleReward!));
  });
});
