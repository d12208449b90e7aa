/**
 * Pieces every toy task shares: the grammar table builder, the noisy reward-model channel
 * (PF-PPO, docs/METHODS.md 5.5), and the per-batch bookkeeping (done / reward / rewardTrue / success and
 * the turn log the trajectory inspector reads).
 */
import type { Rng } from '../rng';
import { PAD, type EpisodeBatch, type TurnView } from './types';
import type { RmUnsureOn } from './knobs';

/** Builds a [V * V] grammar table: allowed[prev * V + next]. */
export function createGrammar(V: number): {
  table: Uint8Array;
  /** Allows tokens [lo, lo + n) after `prev`. */
  allow(prev: number, lo: number, n: number): void;
  /** Allows the listed tokens after `prev`. */
  allowList(prev: number, next: readonly number[]): void;
  /** Rows with no constraint allow everything (no row is ever empty); returns the table. */
  finish(): Uint8Array;
} {
  const table = new Uint8Array(V * V);
  return {
    table,
    allow(prev, lo, n) {
      for (let t = lo; t < lo + n; t++) table[prev * V + t] = 1;
    },
    allowList(prev, next) {
      for (const t of next) table[prev * V + t] = 1;
    },
    finish() {
      for (let prev = 0; prev < V; prev++) {
        let any = 0;
        for (let t = 0; t < V; t++) any |= table[prev * V + t]!;
        if (!any) table.fill(1, prev * V, (prev + 1) * V);
      }
      return table;
    },
  };
}

/** The noisy reward-model channel, shared by every task (env.rmNoise, env.rmNoiseFloor, env.rmUnsure). */
export interface RewardModelOptions {
  /** Noise std at the middle of the reward range (0: the channel is off, reward = rewardTrue). */
  rmNoise: number;
  /** Fraction of that std left at the ends of the range (0: exact at the extremes). */
  rmNoiseFloor: number;
  /**
   * Probability that the reward model is unsure of a rollout and scores it with a uniform draw from
   * the middle half of the reward range, whatever its true reward (0: never). Its extreme scores then
   * come only from rollouts it was sure of: reliable at the extremes and noisy in the middle, by the
   * score it gives, which is the premise PF-PPO's filter needs (docs/TASKS.md).
   */
  rmUnsure?: number;
  /**
   * Which episodes it may be unsure of: `any`, or (search) `unread`, only answers that no search
   * result of the episode showed, which it cannot check against the evidence. A policy can then
   * steer toward what the reward model cannot judge: blind answers score mid-range on average,
   * above a wrong answer it read.
   */
  rmUnsureOn?: RmUnsureOn;
}


export const RM_OFF: RewardModelOptions = { rmNoise: 0, rmNoiseFloor: 0, rmUnsure: 0, rmUnsureOn: 'any' };

/** A task's reward-model options from its config knobs (absent knobs: off). */
export function rewardModelOf(o: Partial<RewardModelOptions>): RewardModelOptions {
  return { rmNoise: o.rmNoise ?? RM_OFF.rmNoise, rmNoiseFloor: o.rmNoiseFloor ?? RM_OFF.rmNoiseFloor, rmUnsure: o.rmUnsure ?? 0, rmUnsureOn: o.rmUnsureOn ?? 'any' };
}

/**
 * Std of the reward model's error at true reward r on a task whose true rewards span [lo, hi]:
 *   u = (r - lo) / (hi - lo) clamped to [0, 1],
 *   std(r) = rmNoise * (floor + (1 - floor) * 4 u (1 - u)),
 * so the variance peaks at mid-range (u = 1/2) and falls to (rmNoise * floor)^2 at the extremes,
 * where PF-PPO assumes the reward model is reliable. [I] toy model of docs/METHODS.md 5.5.
 */
export function rewardModelStd(r: number, lo: number, hi: number, o: RewardModelOptions): number {
  if (o.rmNoise <= 0) return 0;
  const u = hi > lo ? Math.min(1, Math.max(0, (r - lo) / (hi - lo))) : 0;
  return o.rmNoise * (o.rmNoiseFloor + (1 - o.rmNoiseFloor) * 4 * u * (1 - u));
}

export interface BatchStateOptions {
  N: number;
  rm: RewardModelOptions;
  /** The task's range of true rewards, for the reward model's mid-range. */
  rewardRange: readonly [number, number];
  /** The batch's generator: a fork of it draws the reward-model noise (the stream itself is untouched). */
  rng: Rng;
  /** Turns an episode can take, and tokens a turn's action has: the turn log's capacity. */
  maxTurns: number;
  actionLen: number;
}

/** Per-batch state every task keeps, with the one place where an episode's reward is finalized. */
export interface BatchState {
  done: Uint8Array;
  reward: Float32Array;
  rewardTrue: Float32Array;
  success: Uint8Array;
  /** Row n's turn log, for turns() and describe(): built from the records when asked for. */
  turns(n: number): TurnView[];
  /**
   * Ends episode n with its true reward. The training reward is `observed` (default: rTrue; a task
   * with a noisy judge passes the judged reward) plus the reward model's noise at rTrue. `checkable`
   * false: the unsure reward model (env.rmUnsure) may be unsure of this episode; a task that says
   * nothing leaves every episode to it (see `unsureOf`).
   */
  finish(n: number, rTrue: number, solved: boolean, observed?: number, checkable?: boolean): void;
  /**
   * Appends a turn record to row n's log: the policy's tokens are the first `kept` of
   * actions[at..], the environment's e0 and e1 (PAD or -1: none), `role` the acting role's name.
   * Plain arguments, no record object: this runs for every row and turn, and the logs are read
   * for a batch dump or the inspector only (BENCHMARKS.md, an iteration's host work).
   */
  record(n: number, turn: number, actions: Int32Array, at: number, kept: number, e0: number, e1: number, note: string, role?: string): void;
}

/** Label of the reward-model noise stream, forked from the batch generator. */
const RM_STREAM = 0x524d;
/** Label of the unsure reward model's stream (whether it is unsure, and its score). */
const UNSURE_STREAM = 0x554e;

export function createBatchState(o: BatchStateOptions): BatchState {
  const { N } = o;
  const done = new Uint8Array(N);
  const reward = new Float32Array(N);
  const rewardTrue = new Float32Array(N);
  const success = new Uint8Array(N);
  // The turn log in columns, row n's k-th record at slot n * maxTurns + k.
  const { maxTurns, actionLen } = o;
  const count = new Uint8Array(N);
  const recTurn = new Uint8Array(N * maxTurns);
  const recKept = new Uint8Array(N * maxTurns);
  const recPolicy = new Int32Array(N * maxTurns * actionLen);
  const recEnv = new Int32Array(N * maxTurns * 2);
  const recNote: string[] = new Array<string>(N * maxTurns);
  const recRole: Array<string | undefined> = new Array<string | undefined>(N * maxTurns);
  // One standard normal per trajectory, drawn up front so the result does not depend on which
  // trajectories finish first.
  let xi: Float64Array | null = null;
  if (o.rm.rmNoise > 0) {
    const r = o.rng.fork(RM_STREAM);
    xi = Float64Array.from({ length: N }, () => r.normal());
  }
  const [lo, hi] = o.rewardRange;
  // NaN: the reward model is sure of row n; else its score. Its own stream, so a run without it
  // draws exactly what it drew before the knob existed.
  let unsure: Float64Array | null = null;
  const pUnsure = o.rm.rmUnsure ?? 0;
  if (pUnsure > 0) {
    const r = o.rng.fork(UNSURE_STREAM);
    unsure = Float64Array.from({ length: N }, () => {
      const coin = r.next();
      const score = lo + (hi - lo) * (0.25 + 0.5 * r.next());
      return coin < pUnsure ? score : NaN;
    });
  }
  return {
    done,
    reward,
    rewardTrue,
    success,
    turns(n) {
      const out: TurnView[] = [];
      for (let k = 0; k < count[n]!; k++) {
        const r = n * maxTurns + k;
        const policy = Array.from(recPolicy.subarray(r * actionLen, r * actionLen + recKept[r]!));
        const env = [recEnv[2 * r]!, recEnv[2 * r + 1]!].filter((t) => t >= 0 && t !== PAD);
        const role = recRole[r];
        out.push({ turn: recTurn[r]!, ...(role !== undefined ? { role } : {}), policy, env, note: recNote[r]! });
      }
      return out;
    },
    finish(n, rTrue, solved, observed = rTrue, checkable = false) {
      done[n] = 1;
      rewardTrue[n] = rTrue;
      const u = unsure && !checkable ? unsure[n]! : NaN;
      reward[n] = !Number.isNaN(u) ? u : xi ? observed + rewardModelStd(rTrue, lo, hi, o.rm) * xi[n]! : observed;
      success[n] = solved ? 1 : 0;
    },
    record(n, turn, actions, at, kept, e0, e1, note, role) {
      const k = count[n]!;
      if (k >= maxTurns) throw new Error(`turn log: row ${n} already has ${maxTurns} turns`);
      if (kept > actionLen) throw new Error(`turn log: ${kept} policy tokens, a turn has ${actionLen}`);
      const r = n * maxTurns + k;
      count[n] = k + 1;
      recTurn[r] = turn;
      recKept[r] = kept;
      for (let j = 0; j < kept; j++) recPolicy[r * actionLen + j] = actions[at + j]!;
      recEnv[2 * r] = e0;
      recEnv[2 * r + 1] = e1;
      recNote[r] = note;
      if (role !== undefined) recRole[r] = role;
    },
  };
}

/** Renders a turn log the way describe() shows it: `policy tokens → env tokens note`. */
export function renderTurn(vocab: readonly string[], v: TurnView): string {
  const words = (toks: number[]) => toks.map((t) => vocab[t] ?? '?').join(' ');
  let s = (v.role ? `${v.role}: ` : '') + words(v.policy);
  if (v.env.length) s += ` → ${words(v.env)}`;
  if (v.note) s += ` ${v.note}`;
  return s;
}

/** What every task's EpisodeBatch shares; each task spreads this and adds its own fields. */
export interface BatchCoreOptions {
  N: number;
  group: number;
  prompt: Int32Array;
  step: EpisodeBatch['step'];
  vocab: readonly string[];
  /** The prompt as text, first in describe(). */
  header: (n: number) => string;
  /** Appended after the turns (e.g. " | turn limit"). */
  tail?: (n: number) => string;
}

export function batchCore(st: BatchState, o: BatchCoreOptions): Pick<
  EpisodeBatch,
  'size' | 'group' | 'prompt' | 'done' | 'reward' | 'rewardTrue' | 'success' | 'step' | 'describe' | 'turns'
> {
  return {
    size: o.N,
    group: o.group,
    prompt: o.prompt,
    done: st.done,
    reward: st.reward,
    rewardTrue: st.rewardTrue,
    success: st.success,
    step: o.step,
    describe: (n) => [o.header(n), ...st.turns(n).map((v) => renderTurn(o.vocab, v))].join(' | ') + (o.tail?.(n) ?? ''),
    turns: (n) => st.turns(n),
  };
}
