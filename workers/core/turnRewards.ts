/**
 * Per-turn inputs of the reward stage (docs/METHODS.md 6): IGPO's teacher-forced answer contexts (the
 * backend scores them and turns the log-probs into information gain on the device, kernels/advantage/infoGain.ts),
 * GiGPO's step rewards and anchor keys.
 */
import { PAD, type EpisodeBatch } from './envs';
import type { RolloutLayout } from './collect';
import type { Plan } from './plan';
import { pcgHash } from './rng';

export interface AnswerContexts {
  /** [N * maxTurns * L] row n's tokens before turn k, then the answer written as turn k. */
  seqs: Int32Array;
  /** Flat positions in `seqs` of the answer-span tokens, [N * maxTurns * spanLen], (n, k, slot) order. */
  rows: Uint32Array;
  spanLen: number;
}

/**
 * IGPO's teacher-forced contexts: for every row n and turn k, the row's tokens up to the start of
 * turn k followed by the ground-truth answer in turn k's action slots (k = 0 is the bare prompt).
 */
export function answerContexts(seq: Int32Array, answerTokens: Int32Array, answerSpan: Uint8Array, l: RolloutLayout): AnswerContexts {
  const { N, L, maxTurns: T, actionLen, obsLen, promptLen } = l;
  const span = Array.from(answerSpan.keys()).filter((a) => answerSpan[a]);
  const S = span.length;
  const seqs = new Int32Array(N * T * L).fill(PAD);
  const rows = new Uint32Array(N * T * S);
  // Index loops, not subarray views and a callback per context: at 8,192 rollouts (24,576
  // contexts) those were 3.3 ms of an iteration's host work (BENCHMARKS.md).
  for (let n = 0; n < N; n++) {
    for (let k = 0; k < T; k++) {
      const c = n * T + k;
      const start = promptLen + k * (actionLen + obsLen);
      for (let i = 0; i < start; i++) seqs[c * L + i] = seq[n * L + i]!;
      for (let a = 0; a < actionLen; a++) seqs[c * L + start + a] = answerTokens[n * actionLen + a]!;
      for (let i = 0; i < S; i++) rows[c * S + i] = c * L + start + span[i]!;
    }
  }
  return { seqs, rows, spanLen: S };
}

/**
 * GiGPO anchor keys [N * maxTurns]: the state a turn starts from is what the agent last observed --
 * the prompt before turn 0, the previous turn's observation after that -- hashed. Equal keys within a
 * group are one anchor state.
 */
export function anchorKeys(seq: Int32Array, l: RolloutLayout): Uint32Array {
  const { N, L, maxTurns: T, actionLen, obsLen, promptLen } = l;
  const keys = new Uint32Array(N * T);
  const hash = (from: number, len: number, salt: number): number => {
    let h = pcgHash(salt);
    for (let i = 0; i < len; i++) h = pcgHash((h ^ seq[from + i]!) >>> 0);
    return h;
  };
  for (let n = 0; n < N; n++) {
    for (let t = 0; t < T; t++) {
      keys[n * T + t] = t === 0 ? hash(n * L, promptLen, 0x9a) : hash(n * L + promptLen + (t - 1) * (actionLen + obsLen) + actionLen, obsLen, 0x0b5);
    }
  }
  return keys;
}

/**
 * PPO's critic states [N * Tp]: each policy row's context (the tokens the policy sees before it,
 * the last `context` of them) hashed into a table of `size` entries. Rows outside the loss mask
 * get 0: GAE and the critic's update read the keys of masked rows only (kernels/advantage/critic.ts).
 */
export function stateKeys(seq: Int32Array, trainRowPos: Uint32Array, mask: Float32Array, L: number, context: number, size: number): Uint32Array {
  // A plain loop: Uint32Array.from with a callback over every row took 10 ms of a 64x PPO
  // iteration's host work (73,728 rows), this 3.5 ms before the mask.
  const out = new Uint32Array(trainRowPos.length);
  const h0 = pcgHash(0x5a7e);
  for (let r = 0; r < trainRowPos.length; r++) {
    if (!mask[r]) continue;
    const pos = trainRowPos[r]!;
    const start = pos - (pos % L);
    let h = h0;
    for (let k = 1; k <= context; k++) h = pcgHash((h ^ (pos - k >= start ? seq[pos - k]! + 1 : 0)) >>> 0);
    out[r] = h % size;
  }
  return out;
}

/**
 * The reward stage's per-turn inputs of a batch under `plan`: IGPO's answer contexts for the backend
 * to score, with the outcome on each last turn (the backend adds the earlier turns' information
 * gain); the task's checklist turn rewards; or GiGPO's step rewards and anchor keys. The trainer and
 * the batch lab both take them from here. [N * maxTurns] each, zeros where no method defines them.
 */
export function rewardTurns(
  plan: Pick<Plan, 'infoGain' | 'taskTurnRewards' | 'anchors'>,
  ep: EpisodeBatch,
  seq: Int32Array,
  reward: Float32Array,
  turns: Uint32Array,
  l: RolloutLayout,
): { turnReward: Float32Array; turnKey: Uint32Array; score?: { seqs: Int32Array; rows: Uint32Array } } {
  const T = l.maxTurns;
  const none = { turnReward: new Float32Array(l.N * T), turnKey: new Uint32Array(l.N * T) };
  if (plan.infoGain && ep.answerTokens && ep.answerSpan) {
    const ctx = answerContexts(seq, ep.answerTokens, ep.answerSpan, l);
    return { ...none, turnReward: outcomeOnLastTurn(reward, turns, T), score: { seqs: ctx.seqs, rows: ctx.rows } };
  }
  if (plan.taskTurnRewards && ep.turnRewards) return { ...none, turnReward: Float32Array.from(ep.turnRewards) };
  if (plan.anchors) return { turnReward: outcomeOnLastTurn(reward, turns, T), turnKey: anchorKeys(seq, l) };
  return none;
}

/** GiGPO step rewards [N * maxTurns]: the outcome on the last turn taken (the toys have no per-step reward). */
function outcomeOnLastTurn(outcome: Float32Array, turns: Uint32Array, T: number): Float32Array {
  const out = new Float32Array(turns.length * T);
  turns.forEach((Tn, n) => {
    if (Tn > 0) out[n * T + Tn - 1] = outcome[n]!;
  });
  return out;
}
