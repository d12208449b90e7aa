/**
 * Toy multi-turn search (docs/METHODS.md 1.2, 5.1, 5.6). Each episode has its own seeded knowledge base
 * kb[entity][attribute] = value, so the answer cannot be memorized: it must be looked up. The prompt
 * asks one attribute of one entity; each turn the policy emits `SEARCH <entity> <attr>` (the engine
 * returns `RES <value>`) or `ANSWER <value> ·` (the episode ends). Reward 1 for the right answer,
 * else 0; no answer by the turn limit gives -formatPenalty (0 by default).
 *
 * Multi-hop (`hops` >= 2): the knowledge base also links entities, link[entity][relation] = entity,
 * and a question of h hops reads `Q e r1 .. r(h-1) a`: "the attribute a of the entity that is the
 * r(h-1) of ... the r1 of e". `SEARCH <entity> <relation>` returns `<entity> ;`. Relations number
 * as many as attributes. A question of h hops needs h searches, so the turn limit must exceed h.
 *
 * Simulated engine, ZeroSearch-style: each search returns the right document with probability
 * 1 - p and a plausible wrong one (another value, or another entity, of the right kind) otherwise;
 * p is fixed or follows ZeroSearch's exponential curriculum over iterations (`searchNoiseAt`).
 * The draws are keyed by (trajectory, turn), so a row's documents do not depend on the other rows.
 * The oracle searches the hop chain in order, repeating a search whose document was noisy (the fact
 * is still unknown), then answers; it never answers blind, so with noise it needs spare turns.
 *
 * Chance level (uniform policy, 1 hop): it answers blind most of the time and is right 1 time in
 * `values`. With hops = 1 and noise 0 the task is exactly the original search task (same tokens,
 * same random draws).
 */
import { hashUniform, type Rng } from '../rng';
import { batchCore, createBatchState, createGrammar, rewardModelOf, type RewardModelOptions } from './common';
import { portablePow } from './portableMath';
import { PAD, type EpisodeBatch, type TaskEnv, type TaskLayout, type TurnResult } from './types';

import type { NoiseSchedule } from './knobs';
export { NOISE_SCHEDULES, type NoiseSchedule } from './knobs';

export interface SearchNoiseOptions {
  /** p_e: the noise probability (fixed), or the final one of the curriculum. */
  noise: number;
  noiseSchedule: NoiseSchedule;
  /** p_s: the curriculum's starting probability. */
  noiseStart: number;
  /** b: the exponential base (ZeroSearch's exp_base, 4). */
  noiseBase: number;
  /** m: iterations until the curriculum reaches p_e (ZeroSearch's total steps). */
  noiseIters: number;
}

export interface SearchOptions extends Partial<SearchNoiseOptions>, Partial<RewardModelOptions> {
  entities: number;
  attributes: number;
  values: number;
  maxTurns: number;
  /** Hops per question (1: today's single lookup). */
  hops?: number;
  /** Reward for an episode that ends without an answer is -formatPenalty. */
  formatPenalty?: number;
}

/**
 * ZeroSearch's noise curriculum (docs/METHODS.md 5.6; `llm_agent/generation.py::dynamic_threshold`):
 *   p_i = p_s + (b^(i/m) - 1) / (b - 1) * (p_e - p_s),   and p_i = p_e once i >= m,
 * with i the training step. `fixed` gives p_e at every i. b = 1 is the linear limit. Example: p_s 0,
 * p_e 0.5, b 4, m 200: p_0 = 0, p_100 = 1/6, p_200 = 0.5. A batch sampled after k completed
 * iterations is step i = k + 1: ZeroSearch's step counter starts at 1 (Alibaba-NLP/ZeroSearch@2d4cdca
 * verl/trainer/ppo/ray_trainer.py:706, 717, 773), so its first batch already has p_1.
 */
export function searchNoiseAt(i: number, o: SearchNoiseOptions): number {
  if (o.noiseSchedule === 'fixed' || i >= o.noiseIters) return o.noise;
  const x = Math.max(0, i) / o.noiseIters;
  // portablePow, not Math.pow: the recipe's Python computes the same double (portableMath.ts).
  const f = Math.abs(o.noiseBase - 1) < 1e-9 ? x : (portablePow(o.noiseBase, x) - 1) / (o.noiseBase - 1);
  return o.noiseStart + f * (o.noise - o.noiseStart);
}

/** Label of the noise stream forked from a batch's generator. */
const NOISE_STREAM = 0x2e5;

/** Special tokens, in vocabulary order. */
const [BOS, Q, SEARCH, ANSWER, RES] = [1, 2, 3, 4, 5];

/** The task's tokens and grammar for E entities, A attributes, Vv values and `hops` lookups per question. */
function searchLanguage(E: number, A: number, Vv: number, hops: number, maxTurns: number) {
  const R = hops > 1 ? A : 0; // relation tokens
  const specials = ['·', '<s>', 'Q', 'SEARCH', 'ANSWER', 'RES'];
  const ent0 = specials.length;
  const att0 = ent0 + E;
  const val0 = att0 + A;
  const rel0 = val0 + Vv;
  const END = rel0 + R; // ends a relation result (only with hops >= 2)
  const vocab = [
    ...specials,
    ...Array.from({ length: E }, (_, i) => `e${i}`),
    ...Array.from({ length: A }, (_, i) => `a${i}`),
    ...Array.from({ length: Vv }, (_, i) => `v${i}`),
    ...Array.from({ length: R }, (_, i) => `r${i}`),
    ...(hops > 1 ? [';'] : []),
  ];
  const layout: TaskLayout = { promptLen: 3 + hops, actionLen: 3, obsLen: 2, maxTurns };
  // Grammar by previous token: a turn starts after the prompt's attribute or an observation's
  // last token (a value, or `;` after an entity).
  const g = createGrammar(vocab.length);
  for (let a = 0; a < A; a++) g.allow(att0 + a, SEARCH, 2); // prompt ends in an attribute
  for (let v = 0; v < Vv; v++) g.allow(val0 + v, SEARCH, 2); // observation ends in a value
  if (hops > 1) g.allow(END, SEARCH, 2);
  g.allow(SEARCH, ent0, E);
  g.allow(ANSWER, val0, Vv);
  for (let e = 0; e < E; e++) {
    g.allow(ent0 + e, att0, A);
    g.allow(ent0 + e, rel0, R);
  }
  return { E, A, Vv, R, hops, vocab, layout, grammar: g.finish(), ent0, att0, val0, rel0, END };
}
type SearchLanguage = ReturnType<typeof searchLanguage>;

export function createSearchEnv(opts: SearchOptions): TaskEnv {
  const hops = opts.hops ?? 1;
  const lang = searchLanguage(opts.entities, opts.attributes, opts.values, hops, opts.maxTurns);
  const noiseOpts: SearchNoiseOptions = {
    noise: opts.noise ?? 0,
    noiseSchedule: opts.noiseSchedule ?? 'fixed',
    noiseStart: opts.noiseStart ?? 0,
    noiseBase: opts.noiseBase ?? 4,
    noiseIters: opts.noiseIters ?? 200,
  };
  const rm: RewardModelOptions = rewardModelOf(opts);
  const penalty = opts.formatPenalty ?? 0;
  return {
    id: 'search',
    vocab: lang.vocab,
    layout: lang.layout,
    grammar: lang.grammar,
    sample: (prompts, group, rng, iter = 0) => sampleSearch(lang, rm, penalty, searchNoiseAt(iter + 1, noiseOpts), prompts, group, rng),
  };
}

/**
 * Each prompt's knowledge base (a value per entity and attribute), its relation links, its question
 * (start entity, relations, attribute) and the true answer; and the hop chain of each question, as
 * the searches that solve it: step k < hops - 1 is `SEARCH e_k r_(k+1)` (its document is
 * e_(k+1)), the last is `SEARCH e_(hops-1) a`.
 */
function drawQuestions(lang: SearchLanguage, prompts: number, rng: Rng) {
  const { E, A, Vv, R, hops } = lang;
  const kb: Int32Array[] = [];
  const links: Int32Array[] = [];
  /** [prompts * (hops + 1)]: start entity, relations, attribute. */
  const question = new Int32Array(prompts * (hops + 1));
  const truth = new Int32Array(prompts);
  for (let b = 0; b < prompts; b++) {
    const table = new Int32Array(E * A);
    for (let i = 0; i < E * A; i++) table[i] = rng.int(Vv);
    kb.push(table);
    const link = new Int32Array(E * R);
    for (let i = 0; i < E * R; i++) link[i] = rng.int(E);
    links.push(link);
    const q = b * (hops + 1);
    question[q] = rng.int(E);
    for (let h = 1; h < hops; h++) question[q + h] = rng.int(R);
    question[q + hops] = rng.int(A);
    let e = question[q]!;
    for (let h = 1; h < hops; h++) e = link[e * R + question[q + h]!]!;
    truth[b] = table[e * A + question[q + hops]!]!;
  }
  /** [prompts * hops * 2] the (entity, relation-or-attribute) tokens of chain step k. */
  const chain = new Int32Array(prompts * hops * 2);
  for (let b = 0; b < prompts; b++) {
    const q = b * (hops + 1);
    let e = question[q]!;
    for (let k = 0; k < hops; k++) {
      const last = k === hops - 1;
      chain.set([lang.ent0 + e, last ? lang.att0 + question[q + hops]! : lang.rel0 + question[q + k + 1]!], (b * hops + k) * 2);
      if (!last) e = links[b]![e * R + question[q + k + 1]!]!;
    }
  }
  return { kb, links, question, truth, chain };
}

/** The rows' prompts: a group's rows share their prompt, built once per prompt and copied to each row. */
function searchPrompts(lang: SearchLanguage, question: Int32Array, prompts: number, group: number): Int32Array {
  const { hops } = lang;
  const P = lang.layout.promptLen;
  const prompt = new Int32Array(prompts * group * P);
  for (let b = 0; b < prompts; b++) {
    const q = b * (hops + 1);
    const o = b * group * P;
    prompt[o] = BOS;
    prompt[o + 1] = Q;
    prompt[o + 2] = lang.ent0 + question[q]!;
    for (let h = 1; h < hops; h++) prompt[o + 2 + h] = lang.rel0 + question[q + h]!;
    prompt[o + 2 + hops] = lang.att0 + question[q + hops]!;
    // The group's other rows: the rows written so far copied after them, doubling.
    for (let k = 1; k < group; k *= 2) prompt.copyWithin(o + k * P, o, o + Math.min(k, group - k) * P);
  }
  return prompt;
}

/**
 * What each trajectory has learned of its question's chain (the true document of step k seen),
 * and the oracle's next action from it: the first unknown step's search, else the answer.
 */
function chainTracker(lang: SearchLanguage, qs: ReturnType<typeof drawQuestions>, N: number, group: number) {
  const { hops } = lang;
  /** [N * hops] 1 once trajectory n has seen the true document of chain step k. */
  const known = new Uint8Array(N * hops);
  return {
    learn(n: number, x: number, y: number, noisy: boolean): void {
      if (noisy) return;
      const b = Math.floor(n / group);
      for (let k = 0; k < hops; k++) {
        const c = (b * hops + k) * 2;
        if (qs.chain[c] === x && qs.chain[c + 1] === y) known[n * hops + k] = 1;
      }
    },
    next(n: number): Int32Array {
      const out = new Int32Array(3);
      const b = Math.floor(n / group);
      for (let k = 0; k < hops; k++) {
        if (known[n * hops + k]) continue;
        const c = (b * hops + k) * 2;
        out.set([SEARCH, qs.chain[c]!, qs.chain[c + 1]!]);
        return out;
      }
      out.set([ANSWER, lang.val0 + qs.truth[b]!, PAD]);
      return out;
    },
  };
}

function sampleSearch(lang: SearchLanguage, rm: RewardModelOptions, penalty: number, p: number, prompts: number, group: number, rng: Rng): EpisodeBatch {
  const { E, A, Vv, R, ent0, att0, val0, rel0, END, vocab, layout } = lang;
  const maxTurns = layout.maxTurns;
  const N = prompts * group;
  const P = layout.promptLen;
  const qs = drawQuestions(lang, prompts, rng);
  const prompt = searchPrompts(lang, qs.question, prompts, group);
  const noiseSeed = p > 0 ? Math.floor(rng.fork(NOISE_STREAM).next() * 4294967296) : 0;
  const st = createBatchState({ N, rm, rewardRange: [-penalty, 1], rng, maxTurns, actionLen: layout.actionLen });
  // [N * values] 1 once a result of trajectory n showed value v: only an answer that no result
  // showed is one the `unread` reward model cannot check.
  const shown = (rm.rmUnsure ?? 0) > 0 && rm.rmUnsureOn === 'unread' ? new Uint8Array(N * Vv) : null;
  const answerTokens = new Int32Array(N * 3);
  for (let n = 0; n < N; n++) {
    answerTokens[3 * n] = ANSWER;
    answerTokens[3 * n + 1] = val0 + qs.truth[Math.floor(n / group)]!;
    answerTokens[3 * n + 2] = PAD;
  }
  const tail: string[] = new Array<string>(N).fill('');
  const tracker = chainTracker(lang, qs, N, group);
  const isIn = (t: number, lo: number, n: number) => t >= lo && t < lo + n;

  /** The engine: the right document with probability 1 - p, else a wrong one of the same kind. */
  function lookup(n: number, turn: number, right: number, kinds: number): { doc: number; noisy: boolean } {
    if (p <= 0 || kinds < 2 || hashUniform(noiseSeed, n, turn, 0) >= p) return { doc: right, noisy: false };
    const w = Math.floor(hashUniform(noiseSeed, n, turn, 1) * (kinds - 1));
    return { doc: w >= right ? w + 1 : w, noisy: true };
  }

  function step(turn: number, actions: Int32Array): TurnResult {
    const obs = new Int32Array(N * layout.obsLen);
    const actionMask = new Uint8Array(N * layout.actionLen);
    for (let n = 0; n < N; n++) {
      if (st.done[n]) continue;
      const b = Math.floor(n / group);
      // Plain reads and index writes, no array literals: this runs for every trajectory and turn.
      const act = actions[3 * n]!;
      const x = actions[3 * n + 1]!;
      const y = actions[3 * n + 2]!;
      if (act === SEARCH && isIn(x, ent0, E) && isIn(y, att0, A)) {
        const { doc, noisy } = lookup(n, turn, qs.kb[b]![(x - ent0) * A + (y - att0)]!, Vv);
        tracker.learn(n, x, y, noisy);
        if (shown) shown[n * Vv + doc] = 1;
        obs[2 * n] = RES;
        obs[2 * n + 1] = val0 + doc;
        for (let a = 0; a < 3; a++) actionMask[3 * n + a] = 1;
        st.record(n, turn, actions, 3 * n, 3, RES, val0 + doc, noisy ? '(noisy)' : '');
      } else if (act === SEARCH && isIn(x, ent0, E) && isIn(y, rel0, R)) {
        const { doc, noisy } = lookup(n, turn, qs.links[b]![(x - ent0) * R + (y - rel0)]!, E);
        tracker.learn(n, x, y, noisy);
        obs[2 * n] = ent0 + doc;
        obs[2 * n + 1] = END;
        for (let a = 0; a < 3; a++) actionMask[3 * n + a] = 1;
        st.record(n, turn, actions, 3 * n, 3, ent0 + doc, END, noisy ? '(noisy)' : '');
      } else if (act === ANSWER && isIn(x, val0, Vv)) {
        const right = x - val0 === qs.truth[b];
        st.finish(n, right ? 1 : 0, right, undefined, shown ? shown[n * Vv + x - val0] === 1 : false);
        for (let a = 0; a < 2; a++) actionMask[3 * n + a] = 1;
        st.record(n, turn, actions, 3 * n, 2, -1, -1, right ? '✓' : '✗');
      } else {
        // Unreachable under the grammar; kept so a malformed action ends the episode with reward 0.
        st.finish(n, 0, false, undefined, shown !== null);
        for (let a = 0; a < 3; a++) actionMask[3 * n + a] = 1;
        st.record(n, turn, actions, 3 * n, 3, -1, -1, 'malformed');
      }
      if (turn === maxTurns - 1 && !st.done[n]) {
        st.finish(n, penalty > 0 ? -penalty : 0, false, undefined, shown !== null);
        tail[n] = ' | turn limit';
      }
    }
    return { obs, actionMask };
  }

  const oracle = (n: number, turn: number): Int32Array => (st.done[n] || turn < 0 || turn >= maxTurns ? new Int32Array(3) : tracker.next(n));
  const header = (n: number) => 'Q ' + Array.from(prompt.subarray(n * P + 2, (n + 1) * P), (t) => vocab[t]).join(' ');
  return {
    ...batchCore(st, { N, group, prompt, step, vocab, header, tail: (n) => tail[n]! }),
    answerTokens,
    answerSpan: Uint8Array.from([0, 1, 0]),
    oracle,
    info: { search_noise: p },
  };
}

export { PAD };
