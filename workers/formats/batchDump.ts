/**
 * The batch dump (docs/ARCHITECTURE.md "The batch dump"), and its packed form for the trip out of the trainer
 * worker.
 *
 * Why a packed form: at 65,536 trajectories the dump holds ~290,000 token objects. Posting them
 * made the page deserialize them all in one task (0.9-1.1 s with nothing drawn, measured in
 * Chromium). The pack is a few dozen typed arrays and two long strings: the worker transfers them
 * without a copy, and the page builds the objects in slices of a few milliseconds
 * (`unpackBatchInSlices`), so it keeps drawing meanwhile. `packBatch` is the only builder;
 * `unpackBatch` gives the same objects, field for field and in the same key order, so a dump's
 * JSON does not depend on which path made it.
 */
import type { BatchTensors, RunShape, UpdateCapture } from '../core/backend';
import type { RunConfig } from '../core/config';
import type { TaskEnv } from '../core/envs';
import type { TurnChecklist } from '../core/envs/types';
import type { LastBatch, Trainer } from '../core/trainer';
import { ratioSlots, type Plan, type RatioMode } from '../core/plan';
import type { KlType, LossAgg } from '../core/config';
import type { AdvantageOptions } from '../../kernels/advantage/options';
import { ORIGINS, type Origin } from '../core/origins';

/**
 * What the active methods resolved to (workers/core/plan.ts), as the dump states it: which estimator
 * with which options, which ratio mode and clip, which aggregation and KL, and the sampling-stage
 * hooks. A reader (the page's explainer, workers/explain/) takes the formula of each number from
 * here rather than re-deriving the plan from the method list.
 */
export interface DumpPlan {
  advantage: AdvantageOptions & { otb: boolean; zeroTail: boolean; trueGradNorm: boolean };
  /** Batch whitening after the estimator (REINFORCE++, PPO). */
  whiten: boolean;
  /** PPO's GAE over the critic table. */
  critic: { gamma: number; lambda: number } | null;
  ratio: { mode: RatioMode; clipLow: number; clipHigh: number; dualClip: number };
  kl: { coef: number; type: KlType };
  lossAgg: LossAgg;
  /** The aggregation's sequences are turns (GiGPO/SAMPO's step rows). */
  stepRows: boolean;
  infoGain: { igType: 'prob_diff' | 'log_prob_diff' } | null;
  essLr: { rule: 'sqrt' | 'linear'; baseEss: number } | null;
  resample: { weighting: 'pow' | 'max_min' | 'max_random'; pow: number; scope: 'group' | 'batch' } | null;
  extraRollouts: { schedule: 'ET' | 'HW'; nMax: number; useStd: boolean; upper: number } | null;
  errorCorrection: { inject: number; replace: number } | null;
  dynamicSampling: { maxGenBatches: number; from: number } | null;
  /** ReGFT: iterations 1..iters are fine-tuning (advantage R, token cross-entropy). */
  hintedSft: { iters: number; hintTurns: number; hardRate: number } | null;
  staleness: number;
  groupCap: number;
}

/** The plan's part the dump holds (a copy: the dump shares no object with the trainer). */
export function dumpPlan(p: Plan): DumpPlan {
  const copy = <T extends object | null>(o: T): T => (o === null ? o : ({ ...o } as T));
  return {
    advantage: { ...p.advantage, trueGradNorm: p.advantage.trueGradNorm ?? false },
    whiten: p.whiten,
    critic: p.critic ? { gamma: p.critic.gamma, lambda: p.critic.lambda } : null,
    // The loss kernel's slots of the ratio plan (ratioSlots), as the explainer reads them.
    ratio: { mode: p.ratio.mode, ...ratioSlots(p.ratio) },
    kl: { ...p.kl },
    lossAgg: p.lossAgg,
    stepRows: p.stepRows,
    infoGain: copy(p.infoGain),
    essLr: copy(p.essLr),
    resample: copy(p.resample),
    extraRollouts: copy(p.extraRollouts),
    errorCorrection: copy(p.errorCorrection),
    dynamicSampling: copy(p.dynamicSampling),
    hintedSft: copy(p.hintedSft),
    staleness: p.staleness,
    groupCap: p.groupCap,
  };
}

/** Rows per trajectory: tp policy-token slots, max_turns turns of action_len slots each. */
export interface DumpLayout {
  tp: number;
  action_len: number;
  max_turns: number;
}

export interface BatchDump {
  version: 1;
  iter: number;
  config: RunConfig;
  lr: number;
  loss: number;
  /** Search task: the probability that a search returned a noisy document in this iteration. */
  noise_p?: number;
  /**
   * VCPO, one per optimizer step (one per minibatch at one epoch; with several, epoch by epoch):
   * the ESS / trajectories of the step's minibatch at the step's own parameters, and the learning
   * rate the step used.
   */
  ess_minibatch?: number[];
  lr_minibatch?: number[];
  /** The resolved hooks of the active methods (absent in dumps made before it existed, as `layout`). */
  plan?: DumpPlan;
  layout?: DumpLayout;
  /** Step-through only: where inside the iteration this batch stands (absent: after the update). */
  stage?: DumpStage;
  trajs: Array<{
    id: number;
    group: number;
    role: null;
    reward: number;
    reward_true: number;
    /** false: not trained on (a filter dropped it, or ReGFT's fine-tuning kept only correct rollouts). */
    kept: boolean;
    /** PF-PPO: times the rollout was drawn by the reliability resampling (1 without it). */
    copies: number;
    /**
     * Per turn taken, where the methods or the task define them: IGPO's information gain (outcome
     * on the last turn), GiGPO's step rewards, the tools task's checklist rewards R_t.
     */
    turn_rewards?: number[];
    /**
     * Per turn taken, the checklist with the judge's labels (tools task); `deps` the items (of the
     * same turn) it needs first, `step` the action slot whose token decides it.
     */
    checklist?: Array<Array<{ item: string; weight: number; sat: boolean; sat_true: boolean; strict: boolean; deps?: string[]; step?: number }>>;
    /** Multi-agent tasks: the role that acted at each turn taken (roles are per turn, so `role` stays null). */
    turn_roles?: string[];
    /** Multi-agent tasks: each role's own reward, by role name. */
    role_rewards?: Record<string, number>;
    /**
     * Where the trajectory came from (workers/core/origins.ts): the policy's rollout, an EDGE-GRPO
     * correction, a ReGFT hint, a DARS extra rollout, or a DARS slot its prompt left unused (in the
     * prompt's group, never rolled out). Absent in dumps made before it existed.
     */
    origin?: Origin;
    /** The minibatch the trajectory was trained in (absent in older dumps). */
    minibatch?: number;
    /** IGPO: the teacher-forced probability of the true answer before each turn taken (p_0 = bare prompt). */
    p_answer?: number[];
    /** VCPO: the gradient norm |g| its baseline weighs by (the trajectory's own over every parameter; with gradNorm = proxy, sqrt of sum_t 1 - 2 pi + sum pi^2). */
    grad_norm?: number;
    /** PF-PPO: the draw weight before resampling (`copies` is what the draws gave). */
    draw_weight?: number;
    /** GiGPO/SAMPO: per turn taken, the key of the state the turn starts from (equal keys in a group: one anchor set). */
    anchor_keys?: number[];
    text: string;
    tokens: Array<{
      tok: number;
      text: string;
      turn: number;
      mask: number;
      logp_old: number;
      logp: number;
      logp_ref: number;
      entropy: number;
      sum_p2: number;
      adv: number;
      ratio: number;
      clip: number;
      loss: number;
      /** Log-prob under the policy that generated the token (differs from logp_old under staleness). Absent in older dumps, as the next three. */
      logp_rollout?: number;
      /** The old policy's entropy and sum of squared probabilities at this position. */
      entropy_old?: number;
      sum_p2_old?: number;
      /** This token's KL term (the configured estimator). */
      kl?: number;
      /** PPO: the critic's value of the token's state and the GAE return. */
      value?: number;
      ret?: number;
      /**
       * A rollout correction's (docs/METHODS.md 5.19): the token's IS weight, min(exp(clamp(lr)), C)
       * or its rollout's, after batch normalization (1 without an IS level; GMPO's loss takes the
       * rollout's geometric mean of these), and 1 if it stayed in the loss, 0 if rejected.
       */
      is_weight?: number;
      rs_keep?: number;
    }>;
  }>;
}

type Traj = BatchDump['trajs'][number];

/**
 * A step-through dump's place in its iteration (docs/EXPLAIN.md "Step through"). What is not
 * computed yet at that point is NaN in the per-token fields (clip 0) and the `loss` is NaN:
 * - `rewards`: sampled and rewarded (IGPO's information gain included), before any log-prob or advantage;
 * - `advantages`: after the update's prepare phase (old, reference and rollout log-probs, the advantage);
 * - `step`: after one optimizer step; only its minibatch's rows hold log-probs, ratios, clips, KL
 *   and losses (this step's), `ess_minibatch`/`lr_minibatch` run to this step.
 */
export interface DumpStage {
  point: 'rewards' | 'advantages' | 'step';
  step?: {
    index: number;
    /** Optimizer steps in the update. */
    steps: number;
    epoch: number;
    /** SeeUPO's turn stage (0 in every other ratio mode). */
    turn: number;
    minibatch: number;
    /** The global gradient norm before clipping, the ESS and learning rate the step applied. */
    grad_norm: number;
    ess: number;
    lr: number;
    /** The parameters' L2 norm before and after, the change's L2 norm and largest entry. */
    params: { norm_before: number; norm_after: number; delta_norm: number; delta_max: number };
  };
}

/**
 * The dump in columns. Trajectory n owns the entries [end[n - 1], end[n]) of each column that
 * belongs to its `...End` offsets (with end[-1] = 0). Float32 columns hold the backends' float32
 * values, which widen to the dump's numbers exactly.
 */
export interface BatchPack {
  version: 1;
  iter: number;
  config: RunConfig;
  lr: number;
  loss: number;
  vocab: readonly string[];
  group: Int32Array;
  reward: Float32Array;
  rewardTrue: Float32Array;
  kept: Uint8Array;
  copies: Float32Array;
  /** Every trajectory's text, joined; `textEnd` splits it. */
  text: string;
  textEnd: Uint32Array;
  /** Training tokens (masked in only), trajectory after trajectory; its length is the trajectories'. */
  tokenEnd: Uint32Array;
  tok: Int32Array;
  turn: Int32Array;
  logpOld: Float32Array;
  logp: Float32Array;
  logpRef: Float32Array;
  entropy: Float32Array;
  sumP2: Float32Array;
  adv: Float32Array;
  ratio: Float32Array;
  clip: Int32Array;
  lossTok: Float32Array;
  logpRollout: Float32Array;
  entropyOld: Float32Array;
  sumP2Old: Float32Array;
  kl: Float32Array;
  /** PPO only, per token like the columns above. */
  value: Float32Array | null;
  ret: Float32Array | null;
  /** A rollout correction only, per token like the columns above. */
  isWeight?: Float32Array | null;
  rsKeep?: Float32Array | null;
  /** Per trajectory: index into ORIGINS, and the minibatch. */
  origin: Uint8Array;
  minibatch: Int32Array;
  /** VCPO only: [N] |g|. */
  gradNorm: Float32Array | null;
  /** PF-PPO only: [N]. */
  drawWeight: Float64Array | null;
  /** IGPO only: per turn taken (turnEnd), the answer probability before it. */
  pAnswer: Float64Array | null;
  noiseP: number | null;
  /** VCPO only: per optimizer step. */
  essMinibatch: number[] | null;
  lrMinibatch: number[] | null;
  plan: DumpPlan;
  layout: DumpLayout;
  /** GiGPO/SAMPO only: per turn taken (turnEnd), the anchor key. */
  anchorKeys: Uint32Array | null;
  /** Turns taken, for turn_rewards and turn_roles. */
  turnEnd: Uint32Array;
  turnRewards: Float32Array | null;
  /** Role ids per turn taken, and the roles' names (multi-agent tasks). */
  turnRole: Int32Array | null;
  roles: readonly string[] | null;
  /** [N * roles.length] */
  roleRewards: Float32Array | null;
  checklist: ChecklistPack | null;
  /** Step-through only (DumpStage). */
  stage?: DumpStage;
}

/** The tools task's checklists: per trajectory its turns, per turn its items. */
export interface ChecklistPack {
  turnEnd: Uint32Array;
  itemEnd: Uint32Array;
  /** Index into `names`. */
  item: Int32Array;
  names: readonly string[];
  weight: Float64Array;
  /** Bit 0 sat, bit 1 sat_true, bit 2 strict. */
  flags: Uint8Array;
  /** Per item: the action slot that decides it, and its prerequisites (depEnd splits dep, item-local indices). */
  step: Int32Array;
  depEnd: Uint32Array;
  dep: Int32Array;
}

/** Where trajectory (or turn) n's entries begin, given the ends. */
const start = (end: Uint32Array, n: number) => (n === 0 ? 0 : end[n - 1]!);

/**
 * The ordinal of each row's group (groups are runs of rows that start at groupStart). A DARS slot
 * its prompt left unused stays in the prompt's group: the group is the prompt, as the reader sees it.
 */
export function groupIndices(groupStart: Uint32Array, origin: Uint8Array): Int32Array {
  const out = new Int32Array(groupStart.length);
  const unused = ORIGINS.indexOf('unused');
  let g = -1;
  groupStart.forEach((start, n) => (out[n] = start === n && (origin[n] !== unused || g < 0) ? ++g : g));
  return out;
}

/** The trainer's last iteration, packed in columns for postMessage (one readBatch of its backend). */
export async function packBatch(trainer: Trainer): Promise<BatchPack> {
  const b = trainer.lastBatch;
  if (!b) throw new Error('no batch yet: run at least one iteration');
  return packTensors(trainer.config, trainer.env, trainer.shape, trainer.plan, b, await trainer.backend.readBatch());
}

/** The trainer's last iteration as the JSON contract of docs/ARCHITECTURE.md ("The batch dump"). */
export async function dumpBatch(trainer: Trainer): Promise<BatchDump> {
  return unpackBatch(await packBatch(trainer));
}

/**
 * Step-through's dumps of the trainer's last iteration (run by stepThrough(), whose capture this
 * is), in order: after the rewards, after the advantage, after each optimizer step, then the
 * final state (packBatch's). Values the iteration had not computed at a point are NaN there, never
 * the previous iteration's, which the buffers still hold.
 */
export async function packStages(trainer: Trainer, capture: UpdateCapture): Promise<BatchPack[]> {
  const b = trainer.lastBatch;
  if (!b) throw new Error('no batch yet: run at least one iteration');
  const { config: cfg, env, shape, plan } = trainer;
  const R = shape.N * shape.Tp;
  const steps = capture.steps.length;
  const pack = (t: BatchTensors, stage: DumpStage, essUpTo: number): BatchPack => {
    const p = packTensors(cfg, env, shape, plan, b, t);
    return {
      ...p,
      loss: NaN,
      essMinibatch: p.essMinibatch ? p.essMinibatch.slice(0, essUpTo) : null,
      lrMinibatch: p.lrMinibatch ? p.lrMinibatch.slice(0, essUpTo) : null,
      stage,
    };
  };
  const blank = (t: BatchTensors, names: readonly StepField[], r0 = 0, r1 = R): BatchTensors => {
    const out: BatchTensors = { ...t };
    for (const name of names) {
      const a = (out[name] as Float32Array | Int32Array).slice();
      a.fill(name === 'clip' ? 0 : NaN, 0, r0);
      a.fill(name === 'clip' ? 0 : NaN, r1);
      (out as unknown as Record<string, Float32Array | Int32Array>)[name] = a;
    }
    return out;
  };
  const prepared = capture.prepared;
  const rewards = blank(prepared, [...STEP_FIELDS, ...ADVANTAGE_FIELDS.filter((f) => prepared[f] !== undefined)], 0, 0);
  const out = [pack(rewards, { point: 'rewards' }, 0), pack(blank(prepared, STEP_FIELDS, 0, 0), { point: 'advantages' }, 0)];
  for (const c of capture.steps) {
    const { step } = c;
    const t = blank(c.tensors, STEP_FIELDS, step.n0 * shape.Tp, step.n1 * shape.Tp);
    out.push(
      pack(t, {
        point: 'step',
        step: {
          index: step.index, steps, epoch: step.epoch, turn: step.turn, minibatch: step.minibatch,
          grad_norm: c.gradNorm, ess: c.ess, lr: cfg.lr * c.lrScale,
          params: { norm_before: c.params.normBefore, norm_after: c.params.normAfter, delta_norm: c.params.deltaNorm, delta_max: c.params.deltaMax },
        },
      }, step.index + 1),
    );
  }
  out.push(await packBatch(trainer));
  return out;
}

/** What each optimizer step writes, row by row, and what the prepare phase writes. */
const STEP_FIELDS = ['logp', 'entropy', 'sumP2', 'ratio', 'clip', 'loss', 'kl'] as const satisfies readonly (keyof BatchTensors)[];
const ADVANTAGE_FIELDS = ['logpOld', 'logpRef', 'logpRollout', 'entropyOld', 'sumP2Old', 'adv', 'g2', 'value', 'ret', 'isWeight', 'rsKeep'] as const satisfies readonly (keyof BatchTensors)[];
type StepField = (typeof STEP_FIELDS)[number] | (typeof ADVANTAGE_FIELDS)[number];

/** Packs the last iteration's batch; `t` is the backend's readBatch() of it. */
function packTensors(cfg: RunConfig, env: TaskEnv, shape: RunShape, plan: Plan, b: LastBatch, t: BatchTensors): BatchPack {
  const { N } = shape;
  const ep = b.episodes;
  const { tokenEnd, tok, turn, gather } = policyTokens(shape, b.mask, t.seq);
  const { turnEnd, turns, perTurn } = turnsTaken(ep, N, shape.maxTurns);
  const methodTurnRewards = plan.infoGain !== null || plan.taskTurnRewards || plan.anchors;
  const turnRewardSrc = methodTurnRewards ? t.turnReward : ep.turnRewards;
  const texts: string[] = [];
  const textEnd = new Uint32Array(N);
  let chars = 0;
  for (let n = 0; n < N; n++) {
    const s = ep.describe(n);
    texts.push(s);
    textEnd[n] = chars += s.length;
  }
  const multiAgent = ep.turnRole !== undefined && env.roles !== undefined;
  const minibatch = new Int32Array(N);
  shape.minibatches.forEach(([n0, n1], i) => minibatch.fill(i, n0, n1));
  const noise = ep.info?.search_noise;
  const anchorKeys = plan.anchors ? perTurn(b.adv.turnKey, new Uint32Array(turns)) : null;
  const roleRewards = ep.roleReward && env.roles ? Float32Array.from(ep.roleReward.subarray(0, N * env.roles.length)) : null;
  return {
    version: 1,
    iter: b.iter,
    config: cfg,
    lr: b.lr,
    loss: b.loss,
    vocab: env.vocab,
    group: groupIndices(b.adv.groupStart, b.origin),
    reward: b.rewards.slice(0, N),
    rewardTrue: ep.rewardTrue.slice(0, N),
    kept: b.live.slice(0, N).map((v) => (v === 1 ? 1 : 0)),
    copies: b.mult.slice(0, N),
    text: texts.join(''),
    textEnd,
    tokenEnd,
    tok,
    turn,
    logpOld: gather(t.logpOld),
    logp: gather(t.logp),
    logpRef: gather(t.logpRef),
    entropy: gather(t.entropy),
    sumP2: gather(t.sumP2),
    adv: gather(t.adv),
    ratio: gather(t.ratio),
    clip: gather(t.clip, new Int32Array(tok.length)),
    lossTok: gather(t.loss),
    logpRollout: gather(t.logpRollout),
    entropyOld: gather(t.entropyOld),
    sumP2Old: gather(t.sumP2Old),
    kl: gather(t.kl),
    value: t.value ? gather(t.value) : null,
    ret: t.ret ? gather(t.ret) : null,
    isWeight: t.isWeight ? gather(t.isWeight) : null,
    rsKeep: t.rsKeep ? gather(t.rsKeep) : null,
    origin: b.origin.slice(0, N),
    minibatch,
    gradNorm: plan.essLr ? Float32Array.from(t.g2.subarray(0, N), Math.sqrt) : null,
    drawWeight: b.drawWeight ? b.drawWeight.slice(0, N) : null,
    pAnswer: plan.infoGain && t.answerLogp && shape.scoreSpan > 0 ? answerProbabilities(t.answerLogp, shape, turnEnd, turns) : null,
    noiseP: typeof noise === 'number' ? noise : null,
    essMinibatch: plan.essLr ? b.essStep.slice() : null,
    lrMinibatch: plan.essLr ? b.lrStep.slice() : null,
    plan: dumpPlan(plan),
    layout: { tp: shape.Tp, action_len: shape.actionLen, max_turns: shape.maxTurns },
    anchorKeys,
    turnEnd,
    turnRewards: turnRewardSrc ? perTurn(turnRewardSrc, new Float32Array(turns)) : null,
    turnRole: multiAgent ? perTurn(ep.turnRole!, new Int32Array(turns)) : null,
    roles: roleRewards || multiAgent ? env.roles! : null,
    roleRewards,
    checklist: ep.checklist ? packChecklists(ep.checklist, N) : null,
  };
}

/**
 * The policy tokens in the loss, trajectory after trajectory: where each trajectory's end, each
 * token's id and turn, and `gather`, which takes a per-row tensor's values at those rows.
 */
function policyTokens(shape: RunShape, mask: Float32Array, seq: Int32Array) {
  const { N, Tp } = shape;
  const tokenEnd = new Uint32Array(N);
  let count = 0;
  for (let n = 0; n < N; n++) {
    for (let j = 0; j < Tp; j++) if (mask[n * Tp + j]) count++;
    tokenEnd[n] = count;
  }
  const tok = new Int32Array(count);
  const turn = new Int32Array(count);
  const rows = new Uint32Array(count);
  for (let n = 0, k = 0; n < N; n++) {
    for (let j = 0; j < Tp; j++) {
      const r = n * Tp + j;
      if (!mask[r]) continue;
      rows[k] = r;
      tok[k] = seq[shape.trainRowPos[r]!]!;
      turn[k++] = Math.floor(j / shape.actionLen);
    }
  }
  // A loop, not Float32Array.from(rows, fn): the mapping form is several times slower in V8.
  const gather = <A extends Float32Array | Int32Array>(src: A, out: A = new Float32Array(count) as A): A => {
    for (let k = 0; k < count; k++) out[k] = src[rows[k]!]!;
    return out;
  };
  return { tokenEnd, tok, turn, gather };
}

/** Where each trajectory's turns end in the list of turns taken, and `perTurn`, which packs an [N * maxTurns] array into it. */
function turnsTaken(ep: LastBatch['episodes'], N: number, maxTurns: number) {
  const turnEnd = new Uint32Array(N);
  let turns = 0;
  for (let n = 0; n < N; n++) turnEnd[n] = turns += ep.turns(n).length;
  const perTurn = <A extends Float32Array | Int32Array | Uint32Array>(src: A, out: A): A => {
    for (let n = 0; n < N; n++) out.set(src.subarray(n * maxTurns, n * maxTurns + turnEnd[n]! - start(turnEnd, n)), start(turnEnd, n));
    return out;
  };
  return { turnEnd, turns, perTurn };
}

/** IGPO: p_k = exp(mean answer-token log-prob of the context before turn k), for the turns taken. */
function answerProbabilities(answerLogp: Float32Array, shape: RunShape, turnEnd: Uint32Array, turns: number): Float64Array {
  const pAnswer = new Float64Array(turns);
  const S = shape.scoreSpan;
  for (let n = 0; n < shape.N; n++) {
    for (let k = 0; k < turnEnd[n]! - start(turnEnd, n); k++) {
      let s = 0;
      for (let i = 0; i < S; i++) s += answerLogp[(n * shape.maxTurns + k) * S + i]!;
      pAnswer[start(turnEnd, n) + k] = Math.exp(s / S);
    }
  }
  return pAnswer;
}

function packChecklists(lists: readonly TurnChecklist[][], N: number): ChecklistPack {
  const names: string[] = [];
  const nameIndex = new Map<string, number>();
  const turnEnd = new Uint32Array(N);
  const itemEnd: number[] = [];
  const item: number[] = [];
  const weight: number[] = [];
  const flags: number[] = [];
  const step: number[] = [];
  const depEnd: number[] = [];
  const dep: number[] = [];
  for (let n = 0; n < N; n++) {
    for (const c of lists[n]!) {
      c.items.forEach((it, i) => {
        let id = nameIndex.get(it.id);
        if (id === undefined) nameIndex.set(it.id, (id = names.push(it.id) - 1));
        item.push(id);
        weight.push(it.weight);
        flags.push((c.sat[i] === 1 ? 1 : 0) | (c.satTrue[i] === 1 ? 2 : 0) | (it.strict ? 4 : 0));
        step.push(it.step);
        dep.push(...it.deps);
        depEnd.push(dep.length);
      });
      itemEnd.push(item.length);
    }
    turnEnd[n] = itemEnd.length;
  }
  return {
    turnEnd,
    itemEnd: Uint32Array.from(itemEnd),
    item: Int32Array.from(item),
    names,
    weight: Float64Array.from(weight),
    flags: Uint8Array.from(flags),
    step: Int32Array.from(step),
    depEnd: Uint32Array.from(depEnd),
    dep: Int32Array.from(dep),
  };
}

/** The buffers a pack can hand over without a copy (for postMessage's transfer list). */
export function packBuffers(p: BatchPack): ArrayBuffer[] {
  const arrays = [
    p.group, p.reward, p.rewardTrue, p.kept, p.copies, p.textEnd, p.tokenEnd, p.tok, p.turn,
    p.logpOld, p.logp, p.logpRef, p.entropy, p.sumP2, p.adv, p.ratio, p.clip, p.lossTok, p.turnEnd,
    p.turnRewards, p.turnRole, p.roleRewards, p.logpRollout, p.entropyOld, p.sumP2Old, p.kl, p.value, p.ret, p.isWeight, p.rsKeep,
    p.origin, p.minibatch, p.gradNorm, p.drawWeight, p.pAnswer, p.anchorKeys,
    ...(p.checklist ? [p.checklist.turnEnd, p.checklist.itemEnd, p.checklist.item, p.checklist.weight, p.checklist.flags, p.checklist.step, p.checklist.depEnd, p.checklist.dep] : []),
  ];
  const out = new Set<ArrayBuffer>();
  for (const a of arrays) if (a) out.add(a.buffer as ArrayBuffer);
  return [...out];
}

function unpackTraj(p: BatchPack, n: number): Traj {
  const tokens: Traj['tokens'] = [];
  for (let k = start(p.tokenEnd, n); k < p.tokenEnd[n]!; k++) {
    const tok = p.tok[k]!;
    tokens.push({
      tok,
      text: p.vocab[tok] ?? '?',
      turn: p.turn[k]!,
      mask: 1,
      logp_old: p.logpOld[k]!,
      logp: p.logp[k]!,
      logp_ref: p.logpRef[k]!,
      entropy: p.entropy[k]!,
      sum_p2: p.sumP2[k]!,
      adv: p.adv[k]!,
      ratio: p.ratio[k]!,
      clip: p.clip[k]!,
      loss: p.lossTok[k]!,
      logp_rollout: p.logpRollout[k]!,
      entropy_old: p.entropyOld[k]!,
      sum_p2_old: p.sumP2Old[k]!,
      kl: p.kl[k]!,
      ...(p.value && p.ret ? { value: p.value[k]!, ret: p.ret[k]! } : {}),
      ...(p.isWeight && p.rsKeep ? { is_weight: p.isWeight[k]!, rs_keep: p.rsKeep[k]! } : {}),
    });
  }
  const [t0, t1] = [start(p.turnEnd, n), p.turnEnd[n]!];
  const extra: Partial<Traj> = {};
  if (p.turnRewards) extra.turn_rewards = Array.from(p.turnRewards.subarray(t0, t1));
  if (p.pAnswer) extra.p_answer = Array.from(p.pAnswer.subarray(t0, t1));
  if (p.gradNorm) extra.grad_norm = p.gradNorm[n]!;
  if (p.drawWeight) extra.draw_weight = p.drawWeight[n]!;
  if (p.anchorKeys) extra.anchor_keys = Array.from(p.anchorKeys.subarray(t0, t1));
  const c = p.checklist;
  if (c) {
    extra.checklist = [];
    for (let u = start(c.turnEnd, n); u < c.turnEnd[n]!; u++) {
      const items: NonNullable<Traj['checklist']>[number] = [];
      const i0 = start(c.itemEnd, u);
      for (let i = i0; i < c.itemEnd[u]!; i++) {
        const f = c.flags[i]!;
        const deps = Array.from(c.dep.subarray(i === 0 ? 0 : c.depEnd[i - 1]!, c.depEnd[i]!), (d) => c.names[c.item[i0 + d]!]!);
        items.push({ item: c.names[c.item[i]!]!, weight: c.weight[i]!, sat: (f & 1) !== 0, sat_true: (f & 2) !== 0, strict: (f & 4) !== 0, deps, step: c.step[i]! });
      }
      extra.checklist.push(items);
    }
  }
  const roles = p.roles;
  if (p.turnRole && roles) extra.turn_roles = Array.from(p.turnRole.subarray(t0, t1), (r) => roles[r] ?? '?');
  if (p.roleRewards && roles) {
    const R = roles.length;
    extra.role_rewards = Object.fromEntries(roles.map((name, k) => [name, p.roleRewards![n * R + k]!]));
  }
  return {
    id: n,
    group: p.group[n]!,
    role: null,
    reward: p.reward[n]!,
    reward_true: p.rewardTrue[n]!,
    kept: p.kept[n] === 1,
    copies: p.copies[n]!,
    origin: ORIGINS[p.origin[n]!]!,
    minibatch: p.minibatch[n]!,
    ...extra,
    text: p.text.slice(start(p.textEnd, n), p.textEnd[n]),
    tokens,
  };
}

function header(p: BatchPack, trajs: Traj[]): BatchDump {
  return {
    version: 1,
    iter: p.iter,
    config: p.config,
    lr: p.lr,
    loss: p.loss,
    ...(p.noiseP !== null ? { noise_p: p.noiseP } : {}),
    ...(p.essMinibatch && p.lrMinibatch ? { ess_minibatch: p.essMinibatch, lr_minibatch: p.lrMinibatch } : {}),
    plan: p.plan,
    layout: p.layout,
    ...(p.stage ? { stage: p.stage } : {}),
    trajs,
  };
}

/** The dump, all at once (the CLI and the tests). */
export function unpackBatch(p: BatchPack): BatchDump {
  const trajs: Traj[] = [];
  for (let n = 0; n < p.tokenEnd.length; n++) trajs.push(unpackTraj(p, n));
  return header(p, trajs);
}

/** Resolves on the next task, without setTimeout's 4 ms clamp for nested timers. */
export function nextTask(): Promise<void> {
  return new Promise((resolve) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => {
      ch.port1.close();
      resolve();
    };
    ch.port2.postMessage(null);
  });
}

/**
 * The dump, built in slices of about `sliceMs` milliseconds with `pause()` between them, so the
 * page's thread can draw and answer input meanwhile. Same objects as `unpackBatch`.
 */
export async function unpackBatchInSlices(p: BatchPack, sliceMs = 8, pause: () => Promise<void> = nextTask): Promise<BatchDump> {
  const trajs: Traj[] = [];
  const N = p.tokenEnd.length;
  let n = 0;
  while (n < N) {
    const until = performance.now() + sliceMs;
    // Checking the clock every 64 trajectories: a trajectory takes microseconds, a clock read about one.
    do {
      for (const end = Math.min(N, n + 64); n < end; n++) trajs.push(unpackTraj(p, n));
    } while (n < N && performance.now() < until);
    if (n < N) await pause();
  }
  return header(p, trajs);
}
