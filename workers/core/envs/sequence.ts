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
 */
import { createRng, type Rng } from '../rng';
import { batchCore, createBatchState, createGrammar, RM_OFF, type RewardModelOptions } from './common';
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
  const rm: RewardModelOptions = { rmNoise: opts.rmNoise ?? RM_OFF.rmNoise, rmNoiseFloor: opts.rmNoiseFloor ?? RM_OFF.rmNoiseFloor };
  const specials = ['·', '<s>', '✓', '✗'];
  const [, BOS, YES, NO] = [0, 1, 2, 3];
  const id0 = specials.length;
  const sym0 = id0 + T;
  const vocab = [...specials, ...Array.from({ length: T }, (_, i) => `T${i}`), ...Array.from({ length: S }, (_, i) => `s${i}`)];
  const V = vocab.length;
  const layout: TaskLayout = { promptLen: 2, actionLen: L, obsLen: 1, maxTurns: 1 };
  const g = createGrammar(V);
  for (let k = 0; k < T; k++) g.allow(id0 + k, sym0, S);
  for (let s = 0; s < S; s++) g.allow(sym0 + s, sym0, S);
  const grammar = g.finish();
  const target = sequenceTargets(opts);
  /** The turn log's note for each count of matching symbols, built once. */
  const matchNotes = Array.from({ length: L + 1 }, (_, hits) => `(${hits}/${L} match)`);

  function sample(prompts: number, group: number, rng: Rng): EpisodeBatch {
    const N = prompts * group;
    const ids = Int32Array.from({ length: prompts }, () => rng.int(T));
    const prompt = new Int32Array(N * 2);
    const answerTokens = new Int32Array(N * L);
    for (let n = 0; n < N; n++) {
      const k = ids[Math.floor(n / group)]!;
      prompt[2 * n] = BOS;
      prompt[2 * n + 1] = id0 + k;
      for (let j = 0; j < L; j++) answerTokens[n * L + j] = sym0 + target[k * L + j]!;
    }
    const st = createBatchState({ N, rm, rewardRange: [0, 1], rng, maxTurns: layout.maxTurns, actionLen: layout.actionLen });

    function step(turn: number, actions: Int32Array): TurnResult {
      const obs = new Int32Array(N);
      const actionMask = new Uint8Array(N * L);
      for (let n = 0; n < N; n++) {
        if (st.done[n]) continue;
        let hits = 0;
        for (let j = 0; j < L; j++) if (actions[n * L + j] === answerTokens[n * L + j]) hits++;
        const exact = hits === L;
        obs[n] = exact ? YES : NO;
        for (let a = 0; a < L; a++) actionMask[n * L + a] = 1;
        st.record(n, turn, actions, n * L, L, obs[n]!, -1, matchNotes[hits]!);
        st.finish(n, opts.seqReward === 'partial' ? hits / L : exact ? 1 : 0, exact);
      }
      return { obs, actionMask };
    }

    /** The hidden target (one turn). */
    function oracle(n: number, turn: number): Int32Array {
      if (st.done[n] || turn !== 0) return new Int32Array(L);
      return answerTokens.slice(n * L, (n + 1) * L);
    }

    return {
      ...batchCore(st, { N, group, prompt, step, vocab, header: (n) => vocab[prompt[2 * n + 1]!]! }),
      answerTokens,
      answerSpan: new Uint8Array(L).fill(1),
      oracle,
    };
  }

  return { id: 'sequence', vocab, layout, grammar, sample };
}
