/**
 * The plain sequence-matching task of docs/METHODS.md section 3: the collapse dial. The prompt names one
 * of `targets` task ids (`<s> T3`); each id has a hidden target sequence of `seqLen` symbols out of
 * `symbols`, fixed for the run (seeded by the run's seed), which the policy can only find by trial
 * and reward. One turn: the policy writes the whole sequence. Reward: `exact` gives 1 iff the
 * sequence equals the target; `partial` gives the fraction of positions that match. Success: exact.
 *
 * Chance level (uniform policy): p0 = symbols^-seqLen, so a group of G collapses (all-equal
 * rewards) with probability p0^G + (1 - p0)^G: 0.88 for the default 4 symbols, length 3 and G = 8,
 * 0.1 for 2 symbols and length 2, and about 1 for 8 symbols and length 4. `partial` makes groups
 * rarely all-equal.
 *
 * `think` > 0 lets the policy control its length (Dr. GRPO's premise, docs/TASKS.md): before the
 * sequence it may write up to `think` filler tokens `…`, which change nothing about the reward; the
 * sequence is the `seqLen` symbols after them, and slots after it are unused. A response that thinks
 * longer than `think` leaves no room for the whole sequence and misses its last positions. With
 * think = 0 the task is exactly the one above (same vocabulary, layout and draws).
 */
import { createRng, type Rng } from '../rng';
import { batchCore, createBatchState, createGrammar, rewardModelOf, type RewardModelOptions } from './common';
import type { EpisodeBatch, TaskEnv, TaskLayout, TurnResult } from './types';

import type { SeqReward } from './knobs';
export { SEQ_REWARDS, type SeqReward } from './knobs';

export interface SequenceOptions extends Partial<RewardModelOptions> {
  symbols: number;
  seqLen: number;
  /** Distinct task ids, each with its hidden target. */
  targets: number;
  seqReward: SeqReward;
  /** Seeds the hidden targets (the run's seed). */
  seed: number;
  /** Filler tokens the policy may write before the sequence (0: none, the action is the sequence). */
  think?: number;
}

/** Label of the targets' stream, forked from the run's seed. */
const TARGET_STREAM = 0x5e9;

/** The hidden targets: [targets * seqLen] symbol indices. */
export function sequenceTargets(o: Pick<SequenceOptions, 'symbols' | 'seqLen' | 'targets' | 'seed'>): Int32Array {
  const r = createRng(o.seed).fork(TARGET_STREAM);
  return Int32Array.from({ length: o.targets * o.seqLen }, () => r.int(o.symbols));
}

export function createSequenceEnv(opts: SequenceOptions): TaskEnv {
  const { symbols: S, seqLen: L, targets: T } = opts;
  const think = opts.think ?? 0;
  const rm: RewardModelOptions = rewardModelOf(opts);
  const specials = ['·', '<s>', '✓', '✗'];
  const [, BOS, YES, NO] = [0, 1, 2, 3];
  const id0 = specials.length;
  const sym0 = id0 + T;
  // The filler token comes last, so the vocabulary without it is unchanged.
  const THINK = sym0 + S;
  const vocab = [...specials, ...Array.from({ length: T }, (_, i) => `T${i}`), ...Array.from({ length: S }, (_, i) => `s${i}`), ...(think > 0 ? ['…'] : [])];
  const V = vocab.length;
  /** Action slots: the sequence, plus room for the filler. */
  const A = L + think;
  const layout: TaskLayout = { promptLen: 2, actionLen: A, obsLen: 1, maxTurns: 1 };
  const g = createGrammar(V);
  for (let k = 0; k < T; k++) g.allow(id0 + k, sym0, S);
  for (let s = 0; s < S; s++) g.allow(sym0 + s, sym0, S);
  if (think > 0) {
    // Filler only before the sequence: after the task id or more filler, never after a symbol.
    for (let k = 0; k < T; k++) g.allow(id0 + k, THINK, 1);
    g.allow(THINK, sym0, S);
    g.allow(THINK, THINK, 1);
  }
  const grammar = g.finish();
  const target = sequenceTargets(opts);
  /** The turn log's note for each count of matching symbols, built once. */
  const matchNotes = Array.from({ length: L + 1 }, (_, hits) => `(${hits}/${L} match)`);

  function sample(prompts: number, group: number, rng: Rng): EpisodeBatch {
    const N = prompts * group;
    const ids = Int32Array.from({ length: prompts }, () => rng.int(T));
    const prompt = new Int32Array(N * 2);
    // The answer without filler: the target in the first L slots, PAD after.
    const answerTokens = new Int32Array(N * A);
    for (let n = 0; n < N; n++) {
      const k = ids[Math.floor(n / group)]!;
      prompt[2 * n] = BOS;
      prompt[2 * n + 1] = id0 + k;
      for (let j = 0; j < L; j++) answerTokens[n * A + j] = sym0 + target[k * L + j]!;
    }
    const st = createBatchState({ N, rm, rewardRange: [0, 1], rng, maxTurns: layout.maxTurns, actionLen: layout.actionLen });

    function step(turn: number, actions: Int32Array): TurnResult {
      const obs = new Int32Array(N);
      const actionMask = new Uint8Array(N * A);
      for (let n = 0; n < N; n++) {
        if (st.done[n]) continue;
        // Leading filler, then the sequence in the slots that are left.
        let f = 0;
        while (f < A && actions[n * A + f] === THINK) f++;
        const used = Math.min(A, f + L);
        let hits = 0;
        for (let j = 0; f + j < used; j++) if (actions[n * A + f + j] === answerTokens[n * A + j]) hits++;
        const exact = hits === L;
        obs[n] = exact ? YES : NO;
        for (let a = 0; a < used; a++) actionMask[n * A + a] = 1;
        st.record(n, turn, actions, n * A, used, obs[n]!, -1, matchNotes[hits]!);
        st.finish(n, opts.seqReward === 'partial' ? hits / L : exact ? 1 : 0, exact);
      }
      return { obs, actionMask };
    }

    /** The hidden target (one turn), without filler. */
    function oracle(n: number, turn: number): Int32Array {
      if (st.done[n] || turn !== 0) return new Int32Array(A);
      return answerTokens.slice(n * A, (n + 1) * A);
    }

    return {
      ...batchCore(st, { N, group, prompt, step, vocab, header: (n) => vocab[prompt[2 * n + 1]!]! }),
      answerTokens,
      answerSpan: Uint8Array.from({ length: A }, (_, j) => (j < L ? 1 : 0)),
      oracle,
    };
  }

  return { id: 'sequence', vocab, layout, grammar, sample };
}
