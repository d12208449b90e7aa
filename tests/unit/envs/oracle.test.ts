/**
 * The contract the trainer's partial rollouts rely on, for every task: the oracle (the reference
 * solution's next action from the state a row has reached) solves the task; a row's replay depends
 * only on its own actions; and a row marked done before a turn is inert.
 */
import { describe, expect, it } from 'vitest';
import { createRolesEnv } from '../../../workers/core/envs/roles';
import { createSearchEnv } from '../../../workers/core/envs/search';
import { createSequenceEnv } from '../../../workers/core/envs/sequence';
import { createToolsEnv, type ToolsOptions } from '../../../workers/core/envs/tools';
import { PAD, type EpisodeBatch, type TaskEnv } from '../../../workers/core/envs/types';
import { createRng, hashUniform } from '../../../workers/core/rng';
import { allowedAfter } from './rollout';

const toolsBase: ToolsOptions = { toolSteps: 4, toolValues: 3, distractors: 2, judgeNoise: 0, strictArgs: false, toolReward: 'checklist' };
const rolesBase = { entities: 3, attributes: 2, values: 5, roleScale: 1, roleOffset: 0 };

/** Each task with all noise knobs 0, and the maximal reward of one episode. */
const noiseless: { label: string; env: TaskEnv; best: number }[] = [
  { label: 'search, 1 hop', env: createSearchEnv({ entities: 3, attributes: 2, values: 8, maxTurns: 2 }), best: 1 },
  { label: 'search, 3 hops', env: createSearchEnv({ entities: 4, attributes: 3, values: 8, maxTurns: 4, hops: 3 }), best: 1 },
  { label: 'tools, checklist', env: createToolsEnv(toolsBase), best: 1 },
  { label: 'tools, outcome, 2 steps', env: createToolsEnv({ ...toolsBase, toolSteps: 2, toolReward: 'outcome' }), best: 1 },
  { label: 'roles', env: createRolesEnv(rolesBase), best: 1 },
  { label: 'roles, scaled executor', env: createRolesEnv({ ...rolesBase, roleScale: 3, roleOffset: -1 }), best: (1 + 2) / 2 },
  { label: 'sequence, exact', env: createSequenceEnv({ symbols: 4, seqLen: 3, targets: 5, seqReward: 'exact', seed: 7 }), best: 1 },
  { label: 'sequence, partial', env: createSequenceEnv({ symbols: 4, seqLen: 3, targets: 5, seqReward: 'partial', seed: 7 }), best: 1 },
];

/** Each task with its per-step noise on (search documents, judge labels, reward model). */
const noisy: { label: string; env: TaskEnv }[] = [
  { label: 'search', env: createSearchEnv({ entities: 4, attributes: 3, values: 8, maxTurns: 5, hops: 2, noise: 0.4, rmNoise: 0.3 }) },
  { label: 'tools', env: createToolsEnv({ ...toolsBase, judgeNoise: 0.3, rmNoise: 0.3 }) },
  { label: 'roles', env: createRolesEnv({ ...rolesBase, rmNoise: 0.3 }) },
  { label: 'sequence', env: createSequenceEnv({ symbols: 4, seqLen: 3, targets: 5, seqReward: 'partial', seed: 7, rmNoise: 0.3 }) },
];

type Policy = (batch: EpisodeBatch, n: number, turn: number, slot: number, allowed: number[]) => number;

/** A grammar-following uniform policy keyed by (seed, n, turn, slot): row n's tokens depend on row n only. */
const keyed =
  (seed: (n: number) => number): Policy =>
  (_b, n, turn, slot, allowed) =>
    allowed[Math.floor(hashUniform(seed(n), n, turn, slot) * allowed.length)]!;

const oracle: Policy = (batch, n, turn, slot) => batch.oracle!(n, turn)[slot]!;

/**
 * Runs every turn (also after all rows are done) and returns each row's sequence as the trainer
 * writes it, plus each turn's raw result. `prev` of a slot is the last token written before it.
 */
function play(env: TaskEnv, batch: EpisodeBatch, pick: Policy, beforeTurn?: (turn: number) => void) {
  const { promptLen: P, actionLen: L, obsLen: O, maxTurns } = env.layout;
  const N = batch.size;
  const seqs = Array.from({ length: N }, (_, n) => Array.from(batch.prompt.subarray(n * P, (n + 1) * P)));
  const results: ReturnType<EpisodeBatch['step']>[] = [];
  for (let turn = 0; turn < maxTurns; turn++) {
    beforeTurn?.(turn);
    const actions = new Int32Array(N * L);
    for (let n = 0; n < N; n++) {
      let prev = seqs[n]![seqs[n]!.length - 1]!;
      for (let a = 0; a < L; a++) actions[n * L + a] = prev = pick(batch, n, turn, a, allowedAfter(env, prev));
    }
    const res = batch.step(turn, actions);
    results.push(res);
    for (let n = 0; n < N; n++) {
      for (let a = 0; a < L; a++) seqs[n]!.push(res.actionMask[n * L + a] ? actions[n * L + a]! : PAD);
      for (let o = 0; o < O; o++) seqs[n]!.push(res.obs[n * O + o]!);
    }
  }
  return { seqs, results };
}

/** Everything the batch reports about row n. */
function row(env: TaskEnv, batch: EpisodeBatch, n: number) {
  const { maxTurns: T, actionLen: L } = env.layout;
  const R = env.roles?.length ?? 0;
  return {
    done: batch.done[n],
    reward: batch.reward[n],
    rewardTrue: batch.rewardTrue[n],
    success: batch.success[n],
    turns: batch.turns(n),
    text: batch.describe(n),
    turnRewards: batch.turnRewards && Array.from(batch.turnRewards.subarray(n * T, (n + 1) * T)),
    stepRewards: batch.stepRewards && Array.from(batch.stepRewards.subarray(n * T * L, (n + 1) * T * L)),
    checklist: batch.checklist?.[n],
    turnRole: batch.turnRole && Array.from(batch.turnRole.subarray(n * T, (n + 1) * T)),
    roleReward: batch.roleReward && Array.from(batch.roleReward.subarray(n * R, (n + 1) * R)),
  };
}

describe('oracle: the reference solution from the state a row has reached', () => {
  it.each(noiseless)('$label: following it from turn 0 solves every row with the maximal reward', ({ env, best }) => {
    const batch = env.sample(6, 3, createRng(11));
    const { seqs, results } = play(env, batch, oracle);
    expect(Array.from(batch.success)).toEqual(new Array(18).fill(1));
    for (let n = 0; n < 18; n++) {
      expect(batch.reward[n]).toBeCloseTo(best, 6);
      expect(batch.rewardTrue[n]).toBeCloseTo(best, 6);
    }
    if (batch.roleReward) expect(Array.from(batch.roleReward.subarray(0, 2))).toEqual([1, best * 2 - 1]);
    if (batch.turnRewards) expect(Array.from(batch.turnRewards.subarray(0, env.layout.maxTurns))).toEqual(new Array(env.layout.maxTurns).fill(1));
    // Every token it writes is one the grammar allows (the trainer scores forced tokens under it),
    // and every slot it leaves PAD is one the task masks out.
    const { promptLen: P, actionLen: L, obsLen: O } = env.layout;
    const V = env.vocab.length;
    for (let n = 0; n < 18; n++) {
      for (let turn = 0; turn < results.length; turn++) {
        const at = P + turn * (L + O);
        for (let a = 0; a < L; a++) {
          const tok = seqs[n]![at + a]!;
          if (!results[turn]!.actionMask[n * L + a]) continue;
          expect(tok).not.toBe(PAD);
          expect(env.grammar[seqs[n]![at + a - 1]! * V + tok], `row ${n} turn ${turn} slot ${a}`).toBe(1);
        }
      }
    }
  });

  it('all PAD for a finished row or a turn outside the episode', () => {
    for (const { env } of noiseless) {
      const batch = env.sample(1, 2, createRng(3));
      const L = env.layout.actionLen;
      expect(Array.from(batch.oracle!(0, env.layout.maxTurns))).toEqual(new Array(L).fill(PAD));
      expect(Array.from(batch.oracle!(0, -1))).toEqual(new Array(L).fill(PAD));
      batch.done[1] = 1;
      expect(Array.from(batch.oracle!(1, 0))).toEqual(new Array(L).fill(PAD));
      expect(batch.oracle!(0, 0).length).toBe(L);
    }
  });

  it('search: the tokens name the task\'s moves (SEARCH the chain in hop order, then ANSWER the truth)', () => {
    const env = createSearchEnv({ entities: 4, attributes: 3, values: 8, maxTurns: 4, hops: 3 });
    const batch = env.sample(1, 1, createRng(5));
    const names = (a: Int32Array) => Array.from(a, (t) => env.vocab[t]!);
    const [, , e0, r1, r2, attr] = Array.from(batch.prompt);
    expect(Array.from(batch.oracle!(0, 0))).toEqual([env.vocab.indexOf('SEARCH'), e0, r1]);
    const o0 = batch.step(0, batch.oracle!(0, 0)).obs;
    expect(Array.from(batch.oracle!(0, 1))).toEqual([env.vocab.indexOf('SEARCH'), o0[0], r2]);
    const o1 = batch.step(1, batch.oracle!(0, 1)).obs;
    expect(Array.from(batch.oracle!(0, 2))).toEqual([env.vocab.indexOf('SEARCH'), o1[0], attr]);
    batch.step(2, batch.oracle!(0, 2));
    expect(names(batch.oracle!(0, 3))).toEqual(['ANSWER', env.vocab[batch.answerTokens![1]!], '·']);
  });

  it('search: it takes over from any sampled prefix and still solves the live rows', () => {
    const env = createSearchEnv({ entities: 4, attributes: 3, values: 8, maxTurns: 5, hops: 2 });
    const batch = env.sample(32, 4, createRng(2));
    // Two sampled turns (they may search the wrong facts, or answer and end), then the oracle.
    const sampled = keyed(() => 9);
    const { results } = play(env, batch, (b, n, turn, slot, allowed) => (turn < 2 ? sampled(b, n, turn, slot, allowed) : oracle(b, n, turn, slot, allowed)));
    let live = 0;
    for (let n = 0; n < batch.size; n++) {
      const sampledTurns = batch.turns(n).slice(0, 2);
      if (sampledTurns.some((t) => env.vocab[t.policy[0]!] === 'ANSWER')) continue;
      live++;
      expect(batch.success[n], batch.describe(n)).toBe(1);
    }
    expect(live).toBeGreaterThan(10);
    expect(results).toHaveLength(5);
  });

  it('search with noise: a noisy document leaves the fact unknown, so it searches again and still solves', () => {
    // Two hops need 2 true documents then an answer: with p = 0.4 and 12 turns every row of this
    // seed succeeds. With fewer turns a row fails when noise eats its searches (the oracle does not
    // answer blind); that is the task, not the oracle: P(fail) = P(fewer than hops true documents
    // in maxTurns - 1 searches).
    const env = createSearchEnv({ entities: 4, attributes: 3, values: 8, maxTurns: 12, hops: 2, noise: 0.4 });
    const batch = env.sample(32, 4, createRng(17));
    play(env, batch, oracle);
    expect(Array.from(batch.success)).toEqual(new Array(128).fill(1));
    expect(Array.from(batch.reward)).toEqual(new Array(128).fill(1));
    let repeats = 0;
    for (let n = 0; n < batch.size; n++) {
      const t = batch.turns(n);
      for (let i = 0; i + 1 < t.length; i++) {
        if (t[i]!.note !== '(noisy)') continue;
        expect(t[i + 1]!.policy).toEqual(t[i]!.policy); // the same search again
        repeats++;
      }
    }
    expect(repeats).toBeGreaterThan(20);
    // With too few turns some rows run out of searches.
    const short = createSearchEnv({ entities: 4, attributes: 3, values: 8, maxTurns: 3, hops: 2, noise: 0.4 });
    const sb = short.sample(32, 4, createRng(17));
    play(short, sb, oracle);
    const solved = sb.success.reduce((s, x) => s + x, 0);
    expect(solved).toBeGreaterThan(0);
    expect(solved).toBeLessThan(128);
  });

  it('tools: the reference call with the reference arguments, even after a wrong turn', () => {
    const env = createToolsEnv({ ...toolsBase, toolSteps: 3 });
    const id = (s: string) => env.vocab.indexOf(s);
    const batch = env.sample(1, 1, createRng(6));
    const [amt, cur] = [batch.prompt[2]!, batch.prompt[3]!];
    expect(Array.from(batch.oracle!(0, 0))).toEqual([id('RATE'), cur, PAD]);
    const rate = batch.step(0, batch.oracle!(0, 0)).obs[1]!;
    expect(Array.from(batch.oracle!(0, 1))).toEqual([id('CONV'), amt, rate]);
    // A wrong amount: BOOK still pays the reference money, not what the wrong conversion returned.
    const wrongAmt = amt === id('n0') ? id('n1') : id('n0');
    batch.step(1, Int32Array.from([id('CONV'), wrongAmt, rate]));
    const book = batch.oracle!(0, 2);
    expect(book[0]).toBe(id('BOOK'));
    expect(book[1]).toBe(batch.answerTokens![1]);
    batch.step(2, book);
    expect(batch.turnRewards![2]).toBe(1);
  });
});

describe('replays are per trajectory', () => {
  it.each(noisy)('$label: changing the other rows\' actions leaves row 1 unchanged', ({ env }) => {
    const base = keyed(() => 1);
    // Row 1 plays the same tokens; every other row plays others (and so ends at other turns).
    const other: Policy = (b, n, turn, slot, allowed) => (n === 1 ? base(b, n, turn, slot, allowed) : keyed(() => 2)(b, n, turn, slot, allowed));
    const followOracle: Policy = (b, n, turn, slot, allowed) => (n === 1 ? base(b, n, turn, slot, allowed) : oracle(b, n, turn, slot, allowed));
    const a = env.sample(4, 4, createRng(5), 300);
    const pa = play(env, a, base);
    for (const pick of [other, followOracle]) {
      const b = env.sample(4, 4, createRng(5), 300);
      const pb = play(env, b, pick);
      expect(pb.seqs[1]).toEqual(pa.seqs[1]);
      expect(row(env, b, 1)).toEqual(row(env, a, 1));
      // ... while the other rows did change.
      expect(pb.seqs.filter((s, n) => n !== 1 && s.join() !== pa.seqs[n]!.join()).length).toBeGreaterThan(0);
    }
    // Row 1 alone (every other row done from the start) replays the same too.
    const c = env.sample(4, 4, createRng(5), 300);
    const pc = play(env, c, base, (turn) => {
      if (turn === 0) for (let n = 0; n < c.size; n++) if (n !== 1) c.done[n] = 1;
    });
    expect(pc.seqs[1]).toEqual(pa.seqs[1]);
    expect(row(env, c, 1)).toEqual(row(env, a, 1));
  });

  it('the noise is on: the knobs above change what rows see', () => {
    // Guards the test above against passing vacuously with every noise knob off.
    const s = noisy[0]!.env;
    const sb = s.sample(16, 4, createRng(5), 300);
    play(s, sb, oracle);
    expect(Array.from({ length: sb.size }, (_, n) => sb.describe(n)).some((t) => t.includes('(noisy)'))).toBe(true);
    const t = noisy[1]!.env;
    const tb = t.sample(16, 4, createRng(5));
    play(t, tb, oracle);
    expect(tb.checklist!.some((turns) => turns.some((c) => c.sat.some((x, i) => x !== c.satTrue[i])))).toBe(true);
    expect(Array.from(tb.reward)).not.toEqual(Array.from(tb.rewardTrue));
  });
});

describe('a row marked done before a turn is inert', () => {
  it.each(noisy)('$label: actionMask 0, PAD observations, reward and success unchanged', ({ env }) => {
    const { actionLen: L, obsLen: O } = env.layout;
    const ref = env.sample(3, 2, createRng(8), 300);
    play(env, ref, oracle);
    const batch = env.sample(3, 2, createRng(8), 300);
    // Row 0 is dropped before turn 0; row 3 after its first turn (when it is still running).
    const before: ReturnType<typeof row>[] = [];
    const { results } = play(env, batch, (b, n, turn, slot, allowed) => (n === 0 || n === 3 ? allowed[0]! : oracle(b, n, turn, slot, allowed)), (turn) => {
      if (turn === 0) batch.done[0] = 1;
      if (turn === 1 && !batch.done[3]) batch.done[3] = 1;
      if (turn === 1) before.push(structuredClone(row(env, batch, 3)));
    });
    results.forEach((res, turn) => {
      expect(Array.from(res.actionMask.subarray(0, L))).toEqual(new Array(L).fill(0));
      expect(Array.from(res.obs.subarray(0, O))).toEqual(new Array(O).fill(PAD));
      if (turn >= 1) {
        expect(Array.from(res.actionMask.subarray(3 * L, 4 * L))).toEqual(new Array(L).fill(0));
        expect(Array.from(res.obs.subarray(3 * O, 4 * O))).toEqual(new Array(O).fill(PAD));
      }
    });
    const r0 = row(env, batch, 0);
    expect([r0.reward, r0.rewardTrue, r0.success, r0.turns.length]).toEqual([0, 0, 0, 0]);
    if (env.layout.maxTurns > 1) expect(row(env, batch, 3)).toEqual(before[0]);
    // The rows left alone play as if nothing happened.
    for (const n of [1, 2, 4, 5]) expect(row(env, batch, n)).toEqual(row(env, ref, n));
  });
});
