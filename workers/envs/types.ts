/**
 * The contract between the trainer and a toy task. Trajectories advance in lockstep, turn by turn:
 * the policy writes `actionLen` tokens per turn, the task answers with `obsLen` observation tokens.
 * Token sequence of one trajectory ([seqLen], row-major in the batch):
 *   prompt[promptLen] | turn 0: action[actionLen] obs[obsLen] | turn 1: ... | up to maxTurns
 */
import type { Rng } from '../rng';

export const PAD = 0;

export interface TaskLayout {
  promptLen: number;
  actionLen: number;
  obsLen: number;
  maxTurns: number;
}

export function seqLen(l: TaskLayout): number {
  return l.promptLen + l.maxTurns * (l.actionLen + l.obsLen);
}

/** Position in the sequence of action slot `slot` of turn `turn`. */
export function actionPos(l: TaskLayout, turn: number, slot: number): number {
  return l.promptLen + turn * (l.actionLen + l.obsLen) + slot;
}

export interface TurnResult {
  /** [N * obsLen] observation tokens (PAD for finished trajectories). */
  obs: Int32Array;
  /** [N * actionLen] 1 where the sampled token is a real decision of the policy (it enters the loss). */
  actionMask: Uint8Array;
}

export interface EpisodeBatch {
  /** N = prompts * group. Trajectory n belongs to group floor(n / group). */
  readonly size: number;
  readonly group: number;
  /** [N * promptLen] */
  readonly prompt: Int32Array;
  /** [N] 1 once the episode has ended. */
  readonly done: Uint8Array;
  /** [N] outcome reward, final once done (or after the last turn). */
  readonly reward: Float32Array;
  /** [N] 1 where the task was solved. */
  readonly success: Uint8Array;
  /** Applies one turn's sampled tokens ([N * actionLen]); the last turn ends every episode. */
  step(turn: number, actions: Int32Array): TurnResult;
  /** Readable text of one trajectory's tokens, turn by turn. */
  describe(n: number): string;
}

export interface TaskEnv {
  readonly id: string;
  /** Token texts; index = token id. Token 0 is PAD. */
  readonly vocab: readonly string[];
  readonly layout: TaskLayout;
  /**
   * [V * V] action grammar: allowed[prev * V + next] = 1 if the policy may emit `next` right after
   * `prev` (constrained decoding, as tool-call formats do). Rows with no constraint allow everything.
   * Sampling and log-probs both use it, so ratios stay unbiased.
   */
  readonly grammar: Uint8Array;
  sample(prompts: number, group: number, rng: Rng): EpisodeBatch;
}
