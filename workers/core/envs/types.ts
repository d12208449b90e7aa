/**
 * The contract between the trainer and a toy task. Trajectories advance in lockstep, turn by turn:
 * the policy writes `actionLen` tokens per turn, the task answers with `obsLen` observation tokens.
 * Token sequence of one trajectory ([seqLen], row-major in the batch):
 *   prompt[promptLen] | turn 0: action[actionLen] obs[obsLen] | turn 1: ... | up to maxTurns
 *
 * Everything below `success` in EpisodeBatch is optional data that some methods read (IGPO, CM2,
 * Dr. MAS, PF-PPO); a task that has no such notion leaves it out. All arrays are row-major with the
 * trajectory index n first; trajectory n belongs to group floor(n / group).
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
  /**
   * [N * actionLen] 1 where the sampled token is a real decision of the policy (it enters the loss).
   * A 0 slot is written to the sequence as PAD (a slot the action did not use, or a finished episode).
   */
  actionMask: Uint8Array;
}

/**
 * One item of a CM2 checklist (docs/METHODS.md 5.2, the paper's Table 1), annotated from the task's
 * reference trajectory. The seven components are the paper's; `step` places it in our toy.
 */
export interface ChecklistItem {
  /** Short id, unique within its turn (the dump's `item`), e.g. `RATE.tool`. */
  id: string;
  /** Evidence: the trajectory segment the item was annotated from (readable pointer). */
  evidence: string;
  /** Focus: the step type targeted. */
  focus: 'tool call' | 'tool argument' | 'tool response' | 'final reply';
  /** A binary question. */
  question: string;
  /** The explicit pass condition (fail otherwise). */
  pass: string;
  /** `required_for_next_turn`: when the judge says it failed, the episode ends after this turn. */
  strict: boolean;
  /** Indices (within the same turn's item list) of prerequisite items. */
  deps: readonly number[];
  /** Relative weight within the turn; the weights of a turn sum to 1. */
  weight: number;
  /** CM2 step: the action slot (0..actionLen-1) whose token decides the item. */
  step: number;
}

/** One turn's checklist of one trajectory, with the judge's labels and the true ones. */
export interface TurnChecklist {
  items: readonly ChecklistItem[];
  /** [items] the simulated judge's label Sat (after label-flip noise), 1 = satisfied. */
  sat: Uint8Array;
  /** [items] the true label, for evaluation. */
  satTrue: Uint8Array;
}

/** One turn of a trajectory, for the trajectory inspector. */
export interface TurnView {
  turn: number;
  /** The acting role's name (multi-agent tasks), else undefined. */
  role?: string;
  /** Tokens the policy produced that enter the loss (actionMask 1), in slot order. */
  policy: number[];
  /** Tokens the environment returned (masked from the loss); PAD left out. */
  env: number[];
  /** What happened, in words (e.g. `✓`, `noisy document`, `strict item failed`). */
  note: string;
}

export interface EpisodeBatch {
  /** N = prompts * group. Trajectory n belongs to group floor(n / group). */
  readonly size: number;
  readonly group: number;
  /** [N * promptLen] */
  readonly prompt: Int32Array;
  /**
   * [N] 1 once the episode has ended. The caller may also set done[n] = 1 itself before a turn (the
   * trainer does, to roll out only a subset of rows): from then on step() leaves row n inert, with
   * actionMask 0 and PAD observations, and its reward / rewardTrue / success stay as they were.
   */
  readonly done: Uint8Array;
  /**
   * [N] the reward used for training, final once done (or after the last turn). Equal to
   * `rewardTrue` unless the noisy reward-model channel (`env.rmNoise`, PF-PPO) is on.
   */
  readonly reward: Float32Array;
  /** [N] the true reward (no reward-model noise, and no judge noise where the task has a judge). */
  readonly rewardTrue: Float32Array;
  /** [N] 1 where the task was solved. */
  readonly success: Uint8Array;
  /**
   * Applies one turn's sampled tokens ([N * actionLen]); the last turn ends every episode.
   * Replays are per trajectory: what row n observes and earns depends only on the sample() arguments
   * and row n's own actions, never on the other rows (per-step noise is keyed by (n, turn)).
   */
  step(turn: number, actions: Int32Array): TurnResult;
  /** Readable text of one trajectory's tokens, turn by turn. */
  describe(n: number): string;
  /** The turns taken so far by trajectory n, structured (policy tokens vs environment tokens). */
  turns(n: number): TurnView[];

  /**
   * The correct next action of trajectory n at `turn` ([actionLen] tokens, PAD in the slots the
   * action does not use), given the state row n has reached: what the task's reference solution
   * would do next. Every task implements it; following it from turn 0 solves the task with the
   * maximal reward (when noise leaves enough turns). ReGFT's hint-prefixed rollouts and EDGE-GRPO's
   * guided error correction force it for some turns and sample the rest. Call it before step(turn);
   * a finished row or a turn outside [0, maxTurns) gives all PAD. Per task:
   *   search    SEARCH the first fact of the hop chain not yet truly observed (a noisy document
   *             leaves it unknown, so it is searched again), else ANSWER the true value
   *   tools     the reference call of `turn` with the reference arguments
   *   roles     planner: TELL the asked fact; executor: LOOK the asked fact; planner: ANSWER the truth
   *   sequence  the hidden target sequence
   * Optional in the type only so that test doubles may leave it out.
   */
  oracle?(n: number, turn: number): Int32Array;

  // Optional, per method --------------------------------------------------------------------

  /**
   * IGPO (docs/METHODS.md 5.1): the ground-truth answer written as one action turn, [N * actionLen]
   * (e.g. `ANSWER v3 ·`). IGPO teacher-forces it after each turn and averages the log-probs of the
   * slots where `answerSpan` is 1 (the answer itself, not its `ANSWER` prefix).
   */
  readonly answerTokens?: Int32Array;
  /** [actionLen] 1 on the slots of `answerTokens` whose log-probs make p(answer). */
  readonly answerSpan?: Uint8Array;
  /**
   * [N * maxTurns] the reward of each turn where the task defines one (CM2's turn-level reward
   * R_t = sum_c w_c r_{t,c}, from the judge's labels); 0 for turns not taken.
   */
  readonly turnRewards?: Float32Array;
  /**
   * [N * maxTurns * actionLen] CM2 step-level rewards: sum of the weights of the items that became
   * satisfied (deps met) at that action slot; 0 elsewhere. Row (n, turn, slot).
   */
  readonly stepRewards?: Float32Array;
  /** [N][turns taken] the checklist of each turn taken, with judged and true labels. */
  readonly checklist?: TurnChecklist[][];
  /**
   * Multi-agent tasks (Dr. MAS, docs/METHODS.md 5.14): [N * maxTurns] the role (index into
   * TaskEnv.roles) that acted at each turn, -1 for turns not taken. Roles are per turn: one
   * episode holds both roles' turns, and a role's advantage is broadcast to its own turns.
   */
  readonly turnRole?: Int32Array;
  /**
   * [N * roles] each role's own reward in this episode (scaled by the task's role knobs). The
   * trajectory `reward` is their mean; Dr. MAS normalizes each role's column per (group, role).
   */
  readonly roleReward?: Float32Array;
  /** Task-specific scalars of this batch (e.g. the search noise p_i of the curriculum). */
  readonly info?: Readonly<Record<string, number>>;
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
  /** Role names of a multi-agent task (index = role id in EpisodeBatch.turnRole); else undefined. */
  readonly roles?: readonly string[];
  /**
   * Samples `prompts` task instances, each repeated `group` times (a group shares its instance).
   * `iter` = iterations completed before this batch (0 for the first): the clock of curricula such
   * as ZeroSearch's noise schedule. Tasks without a curriculum ignore it.
   */
  sample(prompts: number, group: number, rng: Rng, iter?: number): EpisodeBatch;
}
