import { describe, expect, it } from 'vitest';
import { checklistLabelStepReward } from '../../../workers/core/envs/checklist';
import { createToolsEnv, type ToolsOptions } from '../../../workers/core/envs/tools';
import type { EpisodeBatch, TaskEnv } from '../../../workers/core/envs/types';
import { createRng } from '../../../workers/core/rng';
import { allowedNames, rollout, withinBinomial } from './rollout';

const defaults: ToolsOptions = { toolSteps: 3, toolValues: 3, distractors: 0, judgeNoise: 0, strictArgs: false, toolReward: 'checklist' };

/** The reference call of `turn` for trajectory n, read from the prompt and the previous result. */
function referenceCall(env: TaskEnv, batch: EpisodeBatch, n: number, turn: number, lastResult: number): number[] {
  const id = (s: string) => env.vocab.indexOf(s);
  const [amt, cur] = [batch.prompt[n * 4 + 2]!, batch.prompt[n * 4 + 3]!];
  return [[id('RATE'), cur, 0], [id('CONV'), amt, lastResult], [id('BOOK'), lastResult, 0], [id('CONFIRM'), lastResult, 0]][turn]!;
}

/** Plays the reference plan, optionally replacing one turn's call. */
function play(env: TaskEnv, batch: EpisodeBatch, replace?: { turn: number; call: (ref: number[]) => number[] }) {
  const N = batch.size;
  const last = new Int32Array(N);
  const results: ReturnType<EpisodeBatch['step']>[] = [];
  for (let turn = 0; turn < env.layout.maxTurns && !batch.done.every((d) => d); turn++) {
    const actions = new Int32Array(N * 3);
    for (let n = 0; n < N; n++) {
      const ref = referenceCall(env, batch, n, turn, last[n]!);
      actions.set(replace?.turn === turn ? replace.call(ref) : ref, 3 * n);
    }
    const res = batch.step(turn, actions);
    for (let n = 0; n < N; n++) last[n] = res.obs[2 * n + 1]!;
    results.push(res);
  }
  return results;
}

describe('tools task', () => {
  const env = createToolsEnv(defaults);
  const id = (s: string) => env.vocab.indexOf(s);

  it('vocabulary and layout: one call per turn, as many turns as reference calls', () => {
    expect(env.vocab.slice(0, 9)).toEqual(['·', '<s>', 'REQ', '=', 'OK', 'ERR', 'RATE', 'CONV', 'BOOK']);
    expect(env.vocab.length).toBe(9 + 5 * 3);
    expect(env.layout).toEqual({ promptLen: 4, actionLen: 3, obsLen: 2, maxTurns: 3 });
    const four = createToolsEnv({ ...defaults, toolSteps: 4, distractors: 2 });
    expect(four.vocab.slice(6, 12)).toEqual(['RATE', 'CONV', 'BOOK', 'CONFIRM', 'WEATHER', 'NEWS']);
    expect(four.layout.maxTurns).toBe(4);
  });

  it('grammar: a turn starts with a tool; each tool takes its argument kinds; an amount is followed by a rate', () => {
    const tools = ['RATE', 'CONV', 'BOOK'];
    for (const prev of ['c0', 'x2', 'm1', 'k0', 'OK', 'ERR']) expect(allowedNames(env, prev)).toEqual(tools);
    expect(allowedNames(env, 'RATE')).toEqual(['c0', 'c1', 'c2']);
    expect(allowedNames(env, 'CONV')).toEqual(['n0', 'n1', 'n2']);
    expect(allowedNames(env, 'n1')).toEqual(['x0', 'x1', 'x2']);
    expect(allowedNames(env, 'BOOK')).toEqual(['m0', 'm1', 'm2']);
    expect(allowedNames(env, '=').length).toBe(env.vocab.length); // never precedes a sampled slot
  });

  it('the reference plan: results chain, every item met, reward 1, success', () => {
    const batch = env.sample(4, 2, createRng(3));
    const res = play(env, batch);
    expect(res).toHaveLength(3);
    for (let n = 0; n < 8; n++) {
      expect(Array.from(res[0]!.actionMask.subarray(3 * n, 3 * n + 3))).toEqual([1, 1, 0]);
      expect(Array.from(res[1]!.actionMask.subarray(3 * n, 3 * n + 3))).toEqual([1, 1, 1]);
      expect(env.vocab[res[0]!.obs[2 * n]!]).toBe('=');
      expect(env.vocab[res[0]!.obs[2 * n + 1]!]).toMatch(/^x\d$/);
      expect(env.vocab[res[1]!.obs[2 * n + 1]!]).toMatch(/^m\d$/);
      expect(env.vocab[res[2]!.obs[2 * n + 1]!]).toMatch(/^k\d$/);
    }
    expect(Array.from(batch.reward)).toEqual(new Array(8).fill(1));
    expect(Array.from(batch.rewardTrue)).toEqual(new Array(8).fill(1));
    expect(Array.from(batch.success)).toEqual(new Array(8).fill(1));
    expect(Array.from(batch.turnRewards!.subarray(0, 3))).toEqual([1, 1, 1]);
    // Step rewards: the tool item at slot 0, the arguments at their slots (CONV's two share 1/2).
    expect(Array.from(batch.stepRewards!.subarray(0, 9))).toEqual([0.5, 0.5, 0, 0.5, 0.25, 0.25, 0.5, 0.5, 0]);
    const cl = batch.checklist![0]!;
    expect(cl.map((c) => c.items.map((it) => it.id))).toEqual([['RATE.tool', 'RATE.c'], ['CONV.tool', 'CONV.n', 'CONV.x'], ['BOOK.tool', 'BOOK.m']]);
    expect(cl.every((c) => c.sat.every((s) => s === 1) && c.satTrue.every((s) => s === 1))).toBe(true);
    expect(batch.describe(0)).toMatch(/^REQ n\d c\d \| RATE c\d → = x\d \[RATE: tool✓ c✓\] \| CONV n\d x\d → = m\d \[CONV: tool✓ n✓ x✓\] \| BOOK m\d → = k\d \[BOOK: tool✓ m✓\] \| done ✓$/);
    expect(batch.turns(0).map((t) => t.policy.map((x) => env.vocab[x]![0]).join(''))).toEqual(['Rc', 'Cnx', 'Bm']);
    // IGPO's ground truth: the last reference call.
    expect(Array.from(batch.answerTokens!.subarray(0, 3))).toEqual([id('BOOK'), batch.turns(0)[1]!.env[1], 0]);
    expect(Array.from(batch.answerSpan!)).toEqual([0, 1, 0]);
  });

  it('the checklists read between turns hold the turns judged so far, and later reads the later ones', () => {
    const batch = env.sample(2, 2, createRng(4));
    expect(batch.checklist!.map((rows) => rows.length)).toEqual([0, 0, 0, 0]);
    const last = new Int32Array(4);
    const first = [] as NonNullable<EpisodeBatch['checklist']>;
    for (let turn = 0; turn < 3; turn++) {
      const actions = new Int32Array(4 * 3);
      for (let n = 0; n < 4; n++) actions.set(referenceCall(env, batch, n, turn, last[n]!), 3 * n);
      // Row 3 calls the wrong tool at turn 0: its tool item fails (strict), its episode ends.
      if (turn === 0) actions[9] = actions[9]! + 1;
      const res = batch.step(turn, actions);
      for (let n = 0; n < 4; n++) last[n] = res.obs[2 * n + 1]!;
      if (turn > 0) continue;
      first.push(...batch.checklist!);
      expect(first.map((rows) => rows.length)).toEqual([1, 1, 1, 1]);
      expect(Array.from(first[3]![0]!.sat)).toEqual([0, 0]);
      expect(Array.from(first[0]![0]!.satTrue)).toEqual([1, 1]);
      expect(batch.checklist![0]).toBe(first[0]); // no step since: the same lists
    }
    expect(batch.checklist!.map((rows) => rows.length)).toEqual([3, 3, 3, 1]);
    expect(batch.checklist![0]![0]!.sat).toEqual(first[0]![0]!.sat);
  });

  it('step and turn rewards are Eq. 2 and Eq. 6 of each row\'s judged labels, item by item, for every label row', () => {
    const noisy = createToolsEnv({ ...defaults, judgeNoise: 0.4 });
    const batch = noisy.sample(64, 4, createRng(21));
    // Wrong second arguments at turn 1 for some rows (by the amount token), so true labels vary too.
    play(noisy, batch, { turn: 1, call: (ref) => (ref[1]! % 2 === 0 ? [ref[0]!, ref[1]!, ref[1]!] : ref) });
    const patterns = new Set<string>();
    for (let n = 0; n < batch.size; n++) {
      batch.checklist![n]!.forEach((t, turn) => {
        patterns.add(`${t.items.length}:${Array.from(t.sat).join('')}`);
        const step = new Float32Array(3);
        let R = 0;
        for (let s = 0; s < 3; s++) {
          for (let c = 0; c < t.items.length; c++) {
            const r = t.items[c]!.weight * checklistLabelStepReward(t.items, t.sat, s, c);
            step[s]! += r;
            R += r;
          }
        }
        expect(Array.from(batch.stepRewards!.subarray((n * 3 + turn) * 3, (n * 3 + turn) * 3 + 3)), `row ${n} turn ${turn}`).toEqual(Array.from(step));
        expect(batch.turnRewards![n * 3 + turn], `row ${n} turn ${turn}`).toBe(Math.fround(R));
      });
    }
    // Every label row of the two- and three-item lists came up.
    expect([...patterns].filter((p) => p.startsWith('2:')).length).toBe(4);
    expect([...patterns].filter((p) => p.startsWith('3:')).length).toBe(8);
  });

  it('checklist items carry CM2\'s seven components; weights sum to 1 per turn', () => {
    const batch = env.sample(1, 1, createRng(1));
    play(env, batch);
    for (const turn of batch.checklist![0]!) {
      expect(turn.items.reduce((s, it) => s + it.weight, 0)).toBeCloseTo(1, 12);
      expect(turn.items[0]!.strict).toBe(true);
      expect(turn.items[0]!.deps).toEqual([]);
      for (const it of turn.items.slice(1)) {
        expect(it.deps).toEqual([0]);
        expect(it.strict).toBe(false);
        expect(it.focus).toBe('tool argument');
        expect(it.evidence.length && it.question.length && it.pass.length).toBeTruthy();
      }
    }
  });

  it('a wrong tool fails a strict item: the episode ends after that turn with the partial reward', () => {
    const batch = env.sample(1, 1, createRng(5));
    const res = play(env, batch, { turn: 1, call: (ref) => [id('BOOK'), id('m0'), 0] });
    expect(res).toHaveLength(2);
    expect(batch.done[0]).toBe(1);
    expect(batch.reward[0]).toBeCloseTo(1 / 3, 6); // turn 0 complete, turn 1 nothing, divided by 3 turns
    expect(batch.success[0]).toBe(0);
    expect(Array.from(batch.turnRewards!.subarray(0, 3))).toEqual([1, 0, 0]);
    expect(batch.describe(0)).toMatch(/strict item failed: end$/);
  });

  it('a wrong argument costs its weight and the episode goes on; with strictArgs it ends', () => {
    const wrongAmount = (ref: number[]) => [ref[0]!, ref[1] === id('n0') ? id('n1') : id('n0'), ref[2]!];
    const batch = env.sample(1, 1, createRng(6));
    play(env, batch, { turn: 1, call: wrongAmount });
    expect(batch.turns(0)).toHaveLength(3);
    expect(batch.turnRewards![1]).toBeCloseTo(0.75, 6);
    // BOOK then pays what the wrong conversion returned: its argument item fails unless that equals the reference.
    expect([0.5, 1]).toContain(batch.turnRewards![2]);
    expect(batch.reward[0]).toBeCloseTo((1 + 0.75 + batch.turnRewards![2]!) / 3, 6);
    expect(batch.success[0]).toBe(0);
    const strict = createToolsEnv({ ...defaults, strictArgs: true });
    const b2 = strict.sample(1, 1, createRng(6));
    play(strict, b2, { turn: 1, call: wrongAmount });
    expect(b2.turns(0)).toHaveLength(2);
    expect(b2.reward[0]).toBeCloseTo((1 + 0.75) / 3, 6);
  });

  it('a distractor tool returns `= ERR` and ends the episode', () => {
    const d = createToolsEnv({ ...defaults, distractors: 1 });
    const batch = d.sample(1, 1, createRng(2));
    const res = batch.step(0, Int32Array.from([d.vocab.indexOf('WEATHER'), d.vocab.indexOf('c1'), 0]));
    expect(res.obs[1]).toBe(d.vocab.indexOf('ERR'));
    expect(batch.done[0]).toBe(1);
    expect(batch.reward[0]).toBe(0);
  });

  it('outcome reward: 1 only for the full plan; a partial plan scores 0', () => {
    const o = createToolsEnv({ ...defaults, toolReward: 'outcome' });
    const full = o.sample(2, 2, createRng(8));
    play(o, full);
    expect(Array.from(full.reward)).toEqual([1, 1, 1, 1]);
    const part = o.sample(2, 2, createRng(8));
    play(o, part, { turn: 2, call: (ref) => [ref[0]!, ref[1] === o.vocab.indexOf('m0') ? o.vocab.indexOf('m1') : o.vocab.indexOf('m0'), 0] });
    expect(Array.from(part.reward)).toEqual([0, 0, 0, 0]);
    expect(Array.from(part.rewardTrue)).toEqual([0, 0, 0, 0]);
  });

  it('CONFIRM (4 steps) returns OK for the booking code of the reference', () => {
    const four = createToolsEnv({ ...defaults, toolSteps: 4 });
    const batch = four.sample(2, 1, createRng(9));
    const res = play(four, batch);
    expect(res).toHaveLength(4);
    expect(four.vocab[res[3]!.obs[1]!]).toBe('OK');
    expect(Array.from(batch.success)).toEqual([1, 1]);
  });

  it('judge noise flips labels at the set rate; the true reward ignores the judge', () => {
    const eta = 0.2;
    const noisy = createToolsEnv({ ...defaults, judgeNoise: eta });
    const batch = noisy.sample(256, 8, createRng(13));
    play(noisy, batch);
    let flips = 0;
    let labels = 0;
    for (let n = 0; n < batch.size; n++) {
      for (const t of batch.checklist![n]!) {
        for (let c = 0; c < t.items.length; c++) {
          labels++;
          if (t.sat[c] !== t.satTrue[c]) flips++;
        }
      }
      // Every call was right: the true reward counts the turns taken before a (false) strict failure.
      const taken = batch.turns(n).length;
      expect(batch.rewardTrue[n]).toBeCloseTo(taken / 3, 6);
    }
    expect(withinBinomial(flips, labels, eta)).toBe(true);
    // A flipped strict label ends some episodes early even though every call was right.
    const early = Array.from({ length: batch.size }, (_, n) => batch.turns(n).length).filter((k) => k < 3).length;
    expect(withinBinomial(early, batch.size, 1 - (1 - eta) ** 2)).toBe(true);
    expect(Array.from(batch.reward)).not.toEqual(Array.from(batch.rewardTrue));
  });

  it('is deterministic by seed, shares a request within a group, and rolls out under the grammar', () => {
    const run = (seed: number) => rollout(env, env.sample(8, 4, createRng(seed)), createRng(seed + 1));
    const a = run(3);
    const b = run(3);
    expect(b.seqs).toEqual(a.seqs);
    expect(Array.from(b.batch.reward)).toEqual(Array.from(a.batch.reward));
    expect(run(4).seqs).not.toEqual(a.seqs);
    for (let g = 0; g < 8; g++) for (let i = 1; i < 4; i++) expect(a.seqs[g * 4 + i]!.slice(0, 4)).toEqual(a.seqs[g * 4]!.slice(0, 4));
    expect(a.batch.done.every((d) => d === 1)).toBe(true);
  });
});
