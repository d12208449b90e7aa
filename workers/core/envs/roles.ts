/**
 * Two roles in one episode, for Dr. MAS (docs/METHODS.md 5.14). A planner and an executor share the
 * policy; a role token that the environment writes (`@P`, `@X`) tells it which role it plays. Each
 * episode has its own seeded knowledge base kb[entity][attribute] = value, as in the search task:
 *   prompt   `<s> Q e a @P`                      the question, then the planner's turn
 *   turn 0   planner   `TELL <entity> <attr>`    → `ok @X`       (delegates a lookup)
 *   turn 1   executor  `LOOK <entity> <attr>`    → `@P <value>`  (the engine returns the fact)
 *   turn 2   planner   `ANSWER <value> ·`        (the episode ends)
 * Each role has its own reward: the planner's is (1[it told the asked fact] + 1[right answer]) / 2;
 * the executor's is roleScale * 1[it looked up the asked fact] + roleOffset. The executor's context
 * (the last K = 8 tokens) holds the instruction but not the question's entity, so it must follow the
 * planner. (Rewarding the executor for following whatever it was told lets the pair settle on one
 * constant instruction, which GRPO finds first.) The trajectory reward is their
 * mean, so plain GRPO sees one number per episode; roleReward holds both and turnRole says whose
 * turn each was, so Dr. MAS can normalize per (group, role). With roleScale far from 1 (or an
 * offset) the roles' reward distributions differ and one global mean and std per group mis-scale
 * one role's advantages.
 *
 * Chance level (uniform policy): the answer is right about 1 time in `values`; the planner tells,
 * and the executor looks up, the asked fact 1 time in entities * attributes each.
 */
import type { Rng } from '../rng';
import { batchCore, createBatchState, createGrammar, RM_OFF, type RewardModelOptions } from './common';
import { PAD, type EpisodeBatch, type TaskEnv, type TaskLayout, type TurnResult } from './types';

export interface RolesOptions extends Partial<RewardModelOptions> {
  entities: number;
  attributes: number;
  values: number;
  /** Multiplies the executor's reward. */
  roleScale: number;
  /** Added to the executor's reward. */
  roleOffset: number;
}

export const ROLE_NAMES = ['planner', 'executor'] as const;
/** The fixed turn order: planner, executor, planner. */
export const ROLE_OF_TURN = [0, 1, 0] as const;

/** Special tokens, in vocabulary order. */
const [BOS, Q, RP, RX, TELL, LOOK, ANSWER, OKT] = [1, 2, 3, 4, 5, 6, 7, 8];

/** The task's tokens and grammar for E entities, A attributes and Vv values. */
function rolesLanguage(E: number, A: number, Vv: number) {
  const specials = ['·', '<s>', 'Q', '@P', '@X', 'TELL', 'LOOK', 'ANSWER', 'ok'];
  const ent0 = specials.length;
  const att0 = ent0 + E;
  const val0 = att0 + A;
  const vocab = [
    ...specials,
    ...Array.from({ length: E }, (_, i) => `e${i}`),
    ...Array.from({ length: A }, (_, i) => `a${i}`),
    ...Array.from({ length: Vv }, (_, i) => `v${i}`),
  ];
  const layout: TaskLayout = { promptLen: 5, actionLen: 3, obsLen: 2, maxTurns: 3 };
  // Grammar: the role token fixes the planner's first move and the executor's; a returned value
  // opens the planner's answer. Attribute rows stay free (they never precede a sampled slot).
  const g = createGrammar(vocab.length);
  g.allowList(RP, [TELL]);
  g.allowList(RX, [LOOK]);
  g.allow(TELL, ent0, E);
  g.allow(LOOK, ent0, E);
  for (let e = 0; e < E; e++) g.allow(ent0 + e, att0, A);
  for (let v = 0; v < Vv; v++) g.allowList(val0 + v, [ANSWER]);
  g.allow(ANSWER, val0, Vv);
  return { E, A, Vv, vocab, layout, grammar: g.finish(), ent0, att0, val0 };
}
type RolesLanguage = ReturnType<typeof rolesLanguage>;

export function createRolesEnv(opts: RolesOptions): TaskEnv {
  const lang = rolesLanguage(opts.entities, opts.attributes, opts.values);
  const rm: RewardModelOptions = { rmNoise: opts.rmNoise ?? RM_OFF.rmNoise, rmNoiseFloor: opts.rmNoiseFloor ?? RM_OFF.rmNoiseFloor };
  return { id: 'roles', vocab: lang.vocab, layout: lang.layout, grammar: lang.grammar, roles: ROLE_NAMES, sample: (prompts, group, rng) => sampleRoles(lang, opts, rm, prompts, group, rng) };
}

/** Each prompt's knowledge base and question (entity, attribute), and the rows' prompts. */
function drawRoleQuestions(lang: RolesLanguage, prompts: number, group: number, rng: Rng) {
  const { E, A, Vv, ent0, att0 } = lang;
  const P = lang.layout.promptLen;
  const kb: Int32Array[] = [];
  const question = new Int32Array(prompts * 2);
  for (let b = 0; b < prompts; b++) {
    kb.push(Int32Array.from({ length: E * A }, () => rng.int(Vv)));
    question[2 * b] = rng.int(E);
    question[2 * b + 1] = rng.int(A);
  }
  const N = prompts * group;
  const prompt = new Int32Array(N * P);
  for (let n = 0; n < N; n++) {
    const b = Math.floor(n / group);
    // Index writes, no array literal per row (BENCHMARKS.md, the host side of a rollout).
    prompt[n * P] = BOS;
    prompt[n * P + 1] = Q;
    prompt[n * P + 2] = ent0 + question[2 * b]!;
    prompt[n * P + 3] = att0 + question[2 * b + 1]!;
    prompt[n * P + 4] = RP;
  }
  return { kb, question, prompt, truth: (b: number) => kb[b]![question[2 * b]! * A + question[2 * b + 1]!]! };
}

function sampleRoles(lang: RolesLanguage, opts: RolesOptions, rm: RewardModelOptions, prompts: number, group: number, rng: Rng): EpisodeBatch {
  const { E, A, Vv, ent0, att0, val0, vocab, layout } = lang;
  const { roleScale, roleOffset } = opts;
  const N = prompts * group;
  const P = layout.promptLen;
  const { kb, question, prompt, truth } = drawRoleQuestions(lang, prompts, group, rng);
  const execLo = Math.min(roleOffset, roleScale + roleOffset);
  const execHi = Math.max(roleOffset, roleScale + roleOffset);
  const st = createBatchState({ N, rm, rewardRange: [execLo / 2, (1 + execHi) / 2], rng, maxTurns: layout.maxTurns, actionLen: layout.actionLen });
  const turnRole = new Int32Array(N * 3).fill(-1);
  const roleReward = new Float32Array(N * 2);
  /** [N * 2] the planner's instruction (entity, attribute tokens). */
  const told = new Int32Array(N * 2);
  const followed = new Uint8Array(N);
  const answerTokens = new Int32Array(N * 3);
  for (let n = 0; n < N; n++) {
    answerTokens[3 * n] = ANSWER;
    answerTokens[3 * n + 1] = val0 + truth(Math.floor(n / group));
    answerTokens[3 * n + 2] = PAD;
  }
  /** [N] 1 where the planner told, or the executor looked up, the fact the question asks. */
  const toldRight = new Uint8Array(N);
  const lookedRight = new Uint8Array(N);
  const isIn = (t: number, lo: number, n: number) => t >= lo && t < lo + n;
  const asked = (b: number, x: number, y: number) => (x - ent0 === question[2 * b] && y - att0 === question[2 * b + 1] ? 1 : 0);

  function end(n: number, right: boolean): void {
    const rP = (toldRight[n]! + (right ? 1 : 0)) / 2;
    const rX = roleScale * lookedRight[n]! + roleOffset;
    roleReward[2 * n] = rP;
    roleReward[2 * n + 1] = rX;
    st.finish(n, (rP + rX) / 2, right);
  }

  function step(turn: number, actions: Int32Array): TurnResult {
    const obs = new Int32Array(N * 2);
    const actionMask = new Uint8Array(N * 3);
    for (let n = 0; n < N; n++) {
      if (st.done[n]) continue;
      const b = Math.floor(n / group);
      // Plain reads and index writes, no array literals: this runs for every trajectory and turn.
      const act = actions[3 * n]!;
      const x = actions[3 * n + 1]!;
      const y = actions[3 * n + 2]!;
      const role = ROLE_OF_TURN[turn] ?? 0;
      turnRole[n * 3 + turn] = role;
      const fact = isIn(x, ent0, E) && isIn(y, att0, A);
      if (turn === 0 && act === TELL && fact) {
        told[2 * n] = x;
        told[2 * n + 1] = y;
        toldRight[n] = asked(b, x, y);
        obs[2 * n] = OKT;
        obs[2 * n + 1] = RX;
        for (let a = 0; a < 3; a++) actionMask[3 * n + a] = 1;
        st.record(n, turn, actions, 3 * n, 3, OKT, RX, '', ROLE_NAMES[role]);
      } else if (turn === 1 && act === LOOK && fact) {
        followed[n] = x === told[2 * n] && y === told[2 * n + 1] ? 1 : 0;
        lookedRight[n] = asked(b, x, y);
        const v = val0 + kb[b]![(x - ent0) * A + (y - att0)]!;
        obs[2 * n] = RP;
        obs[2 * n + 1] = v;
        for (let a = 0; a < 3; a++) actionMask[3 * n + a] = 1;
        st.record(n, turn, actions, 3 * n, 3, RP, v, followed[n] ? '(as told)' : '(not as told)', ROLE_NAMES[role]);
      } else if (turn === 2 && act === ANSWER && isIn(x, val0, Vv)) {
        const right = x - val0 === truth(b);
        for (let a = 0; a < 2; a++) actionMask[3 * n + a] = 1;
        st.record(n, turn, actions, 3 * n, 2, -1, -1, right ? '✓' : '✗', ROLE_NAMES[role]);
        end(n, right);
      } else {
        // Unreachable under the grammar: a malformed turn ends the episode, the answer wrong.
        for (let a = 0; a < 3; a++) actionMask[3 * n + a] = 1;
        st.record(n, turn, actions, 3 * n, 3, -1, -1, 'malformed', ROLE_NAMES[role]);
        end(n, false);
      }
    }
    return { obs, actionMask };
  }

  /** Planner: TELL the asked fact, then ANSWER the truth; executor: LOOK the asked fact. */
  function oracle(n: number, turn: number): Int32Array {
    const out = new Int32Array(3);
    if (st.done[n] || turn < 0 || turn >= layout.maxTurns) return out;
    const b = Math.floor(n / group);
    const [e, a] = [ent0 + question[2 * b]!, att0 + question[2 * b + 1]!];
    out.set(turn === 0 ? [TELL, e, a] : turn === 1 ? [LOOK, e, a] : [ANSWER, val0 + truth(b), PAD]);
    return out;
  }

  const header = (n: number) => `Q ${vocab[prompt[n * P + 2]!]} ${vocab[prompt[n * P + 3]!]}`;
  return {
    ...batchCore(st, { N, group, prompt, step, vocab, header }),
    answerTokens,
    answerSpan: Uint8Array.from([0, 1, 0]),
    oracle,
    turnRole,
    roleReward,
  };
}
