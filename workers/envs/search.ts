/**
 * Toy multi-turn search. Each episode has its own seeded knowledge base kb[entity][attribute] =
 * value, so the answer cannot be memorized: it must be looked up. The prompt asks one attribute of
 * one entity; each turn the policy emits `SEARCH <entity> <attr>` (the engine returns `RES <value>`)
 * or `ANSWER <value> ·` (the episode ends). Reward 1 for the right answer, else 0; no answer by the
 * turn limit gives 0.
 *
 * Chance level (uniform policy): it answers blind most of the time and is right 1 time in `values`.
 */
import type { Rng } from '../rng';
import { PAD, type EpisodeBatch, type TaskEnv, type TaskLayout, type TurnResult } from './types';

export interface SearchOptions {
  entities: number;
  attributes: number;
  values: number;
  maxTurns: number;
}

export function createSearchEnv(opts: SearchOptions): TaskEnv {
  const { entities: E, attributes: A, values: Vv, maxTurns } = opts;
  const specials = ['·', '<s>', 'Q', 'SEARCH', 'ANSWER', 'RES'];
  const [, BOS, Q, SEARCH, ANSWER, RES] = [0, 1, 2, 3, 4, 5];
  const ent0 = specials.length;
  const att0 = ent0 + E;
  const val0 = att0 + A;
  const vocab = [
    ...specials,
    ...Array.from({ length: E }, (_, i) => `e${i}`),
    ...Array.from({ length: A }, (_, i) => `a${i}`),
    ...Array.from({ length: Vv }, (_, i) => `v${i}`),
  ];
  const V = vocab.length;
  const layout: TaskLayout = { promptLen: 4, actionLen: 3, obsLen: 2, maxTurns };

  // Grammar by previous token: a turn starts after the prompt's attribute or an observation's value.
  const grammar = new Uint8Array(V * V);
  const allow = (prev: number, lo: number, n: number) => {
    for (let t = lo; t < lo + n; t++) grammar[prev * V + t] = 1;
  };
  for (let a = 0; a < A; a++) allow(att0 + a, SEARCH, 2); // prompt ends in an attribute
  for (let v = 0; v < Vv; v++) allow(val0 + v, SEARCH, 2); // observation ends in a value
  allow(SEARCH, ent0, E);
  allow(ANSWER, val0, Vv);
  for (let e = 0; e < E; e++) allow(ent0 + e, att0, A);
  for (let prev = 0; prev < V; prev++) {
    let any = 0;
    for (let t = 0; t < V; t++) any |= grammar[prev * V + t]!;
    if (!any) allow(prev, 0, V);
  }

  const isIn = (t: number, lo: number, n: number) => t >= lo && t < lo + n;

  function sample(prompts: number, group: number, rng: Rng): EpisodeBatch {
    const N = prompts * group;
    const kb: Int32Array[] = [];
    const question = new Int32Array(prompts * 2);
    for (let b = 0; b < prompts; b++) {
      const table = new Int32Array(E * A);
      for (let i = 0; i < E * A; i++) table[i] = rng.int(Vv);
      kb.push(table);
      question[2 * b] = rng.int(E);
      question[2 * b + 1] = rng.int(A);
    }
    const prompt = new Int32Array(N * layout.promptLen);
    for (let n = 0; n < N; n++) {
      const b = Math.floor(n / group);
      prompt.set([BOS, Q, ent0 + question[2 * b]!, att0 + question[2 * b + 1]!], n * layout.promptLen);
    }
    const done = new Uint8Array(N);
    const reward = new Float32Array(N);
    const success = new Uint8Array(N);
    const history: string[][] = Array.from({ length: N }, (_, n) => [
      `Q ${vocab[prompt[n * 4 + 2]!]} ${vocab[prompt[n * 4 + 3]!]}`,
    ]);

    function step(turn: number, actions: Int32Array): TurnResult {
      const obs = new Int32Array(N * layout.obsLen);
      const actionMask = new Uint8Array(N * layout.actionLen);
      for (let n = 0; n < N; n++) {
        if (done[n]) continue;
        const b = Math.floor(n / group);
        const [act, x, y] = [actions[3 * n]!, actions[3 * n + 1]!, actions[3 * n + 2]!];
        if (act === SEARCH && isIn(x, ent0, E) && isIn(y, att0, A)) {
          const v = kb[b]![(x - ent0) * A + (y - att0)]!;
          obs[2 * n] = RES;
          obs[2 * n + 1] = val0 + v;
          actionMask.set([1, 1, 1], 3 * n);
          history[n]!.push(`SEARCH ${vocab[x]} ${vocab[y]} → RES v${v}`);
        } else if (act === ANSWER && isIn(x, val0, Vv)) {
          const right = x - val0 === kb[b]![question[2 * b]! * A + question[2 * b + 1]!];
          reward[n] = right ? 1 : 0;
          success[n] = right ? 1 : 0;
          done[n] = 1;
          actionMask.set([1, 1, 0], 3 * n);
          history[n]!.push(`ANSWER ${vocab[x]} ${right ? '✓' : '✗'}`);
        } else {
          // Unreachable under the grammar; kept so a malformed action ends the episode with reward 0.
          done[n] = 1;
          actionMask.set([1, 1, 1], 3 * n);
          history[n]!.push(`malformed ${vocab[act]} ${vocab[x]} ${vocab[y]}`);
        }
        if (turn === maxTurns - 1 && !done[n]) {
          done[n] = 1;
          history[n]!.push('turn limit');
        }
      }
      return { obs, actionMask };
    }

    return {
      size: N,
      group,
      prompt,
      done,
      reward,
      success,
      step,
      describe: (n) => history[n]!.join(' | '),
    };
  }

  return { id: 'search', vocab, layout, grammar, sample };
}

export { PAD };
