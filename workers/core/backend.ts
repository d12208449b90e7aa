/**
 * One interface, two backends (docs/ARCHITECTURE.md): `gpu` (WebGPU kernels, buffers resident on the device)
 * and `cpu` (the kernels' TypeScript references). The trainer drives either the same way, and both
 * perform the same sequence of operations, so the same config and seed give the same numbers.
 */
import type { EssScaleOptions } from '../../kernels/optimizer/essScale';
import type { RolloutCorrectionConfig } from '../../kernels/loss/rolloutCorrection';
import type { InfoGainType } from '../../kernels/advantage/infoGain';
import type { MlpDims } from '../../kernels/model/mlp';
import { samplerActive, type SamplerOptions } from '../../kernels/softmax/samplerOptions';
import type { MismatchStats } from '../../kernels/stats/mismatchStats';
import type { StatsOut } from '../../kernels/stats/stats';
import type { KlType, LossAgg } from './config';
import type { Plan, RatioPlan } from './plan';
import type { StepRef } from './update/stage';

/** The backend a user asks for: 'auto' takes the GPU where there is a hardware adapter. */
export const BACKEND_CHOICES = ['auto', 'gpu', 'cpu'] as const;
export type BackendChoice = (typeof BACKEND_CHOICES)[number];

/** Everything static for a run: shapes, row tables, hyperparameters. Made once per run. */
export interface RunShape {
  dims: MlpDims;
  /** Trajectory rows per batch (prompts * groupCap). */
  N: number;
  /** Rollouts per prompt of the config. */
  group: number;
  /** Rows per prompt the buffers hold (the group, or DARS's N_max). */
  groupCap: number;
  /** Tokens per trajectory sequence. */
  L: number;
  /** Policy-token rows per trajectory (maxTurns * actionLen). */
  Tp: number;
  actionLen: number;
  obsLen: number;
  promptLen: number;
  maxTurns: number;
  /** [N * Tp] flat sequence position predicted by each training row: row n*Tp + j. */
  trainRowPos: Uint32Array;
  /** [maxTurns * actionLen][N] sequence positions sampled at each (turn, slot). */
  rolloutRowPos: Uint32Array[];
  /** [V * V] allowed[prev * V + next]. */
  grammar: Uint8Array;
  /** Trajectory ranges [start, end) of each minibatch; rows are [start*Tp, end*Tp). */
  minibatches: Array<[number, number]>;
  seed: number;
  temperature: number;
  epochs: number;
  optim: { beta1: number; beta2: number; eps: number; maxGradNorm: number };
  /**
   * The loss: its ratio and what bounds it (workers/core/plan.ts RatioPlan), the KL and the
   * aggregation (with `stepRows`, GiGPO's and SAMPO's, a turn's rows count as one sequence).
   */
  loss: { ratio: RatioPlan; klCoef: number; klType: KlType; agg: LossAgg; stepRows?: boolean };
  /**
   * The rollout correction (plan.rolloutCorrection, docs/METHODS.md 5.19): IS weights and
   * rejection of the sampler's tokens against the old log-probs; absent or null: none.
   */
  correction?: RolloutCorrectionConfig | null;
  /** The advantage stage's options (workers/core/plan.ts Plan.advantage). */
  adv: Plan['advantage'];
  /** REINFORCE++: whiten advantages over the batch. */
  whiten: boolean;
  /** Columns of the per-role rewards (1 for tasks without roles). */
  nRoles: number;
  /** VCPO's ESS-scaled learning rate (the ESS is reported either way). */
  essLr: EssScaleOptions;
  /** Roll out with the parameters of this many updates ago. */
  staleness: number;
  /**
   * The rollout's sampler (kernels/softmax/sampler.ts): its precision and truncation, for drawing
   * the tokens and for their rollout log-probs; the trainer's log-probs never use it. Absent: the
   * trainer's own distribution (SAMPLER_OFF).
   */
  sampler?: SamplerOptions;
  /** IGPO: contexts the backend scores per iteration (N * maxTurns), 0 when unused. */
  scoreContexts: number;
  /** IGPO: answer tokens scored per context. */
  scoreSpan: number;
  /** IGPO: how the answer log-probs become information gain. */
  igType: InfoGainType;
  /** The run has a fine-tuning stage (ReGFT): its updates use the cross-entropy loss. */
  sft: boolean;
  /** PPO: the critic table and its GAE (replaces the advantage estimator), or null. */
  critic: { size: number; gamma: number; lambda: number; lr: number } | null;
}

/** The advantage stage's per-trajectory and per-turn inputs (kernels/advantage/advantage.ts AdvantageInputs). */
export interface AdvantageData {
  /** [N] training reward of each row. */
  reward: Float32Array;
  /** [N] first row of the row's group, and the group's size. */
  groupStart: Uint32Array;
  groupSize: Uint32Array;
  /** [N] turns taken; 0 for rows without a trajectory. */
  turns: Uint32Array;
  /** [N * maxTurns] per-turn rewards (IGPO, CM2 turn level, GiGPO steps). */
  turnReward: Float32Array;
  /** [N * maxTurns] acting role per turn, -1 none (Dr. MAS). */
  turnRole: Int32Array;
  /** [N * maxTurns] GiGPO anchor key of the state each turn starts from. */
  turnKey: Uint32Array;
  /** [N * nRoles] each role's reward (Dr. MAS). */
  roleRewards: Float32Array;
}

export interface UpdateInput {
  iter: number;
  /** Also return the model state (read back with the statistics, in the same copy). */
  snapshot?: boolean;
  lr: number;
  adv: AdvantageData;
  /** ReGFT's fine-tuning stage: the advantage is the reward itself (estimator raw), the loss token cross-entropy. */
  raw?: boolean;
  /**
   * [N * Tp] 0/1 loss mask. With a rollout correction its stage replaces mask, weights and
   * stageWeights, in the update's own copy of this input, by the mask with the rejected tokens
   * out and the aggregation weights over it, and sets isWeight; the stages after it read those.
   */
  mask: Float32Array;
  /** [N * Tp] aggregation weights (0 where masked; each minibatch's weights give its mean). */
  weights: Float32Array;
  /** SeeUPO: the aggregation weights of each turn's stage ([maxTurns] arrays of [N * Tp]). */
  stageWeights?: Float32Array[];
  /** [N] how many times each trajectory counts in the aggregation (PF-PPO's draws; absent: 1). */
  mult?: Float32Array;
  /** [N * Tp] the rollout correction's stopped IS weight on each row's policy term (absent: 1). */
  isWeight?: Float32Array;
  /**
   * IGPO: the teacher-forced answer contexts ([scoreContexts * L] tokens) and the flat positions of
   * their answer tokens. The backend scores them with the rollout policy and writes the information
   * gain of every turn but the last into the per-turn rewards (adv.turnReward holds the outcome on
   * each last turn).
   */
  score?: { seqs: Int32Array; rows: Uint32Array };
  /** PPO: [N * Tp] the critic-table entry of each policy row's state. */
  stateKey?: Uint32Array;
  /**
   * Step-through (docs/EXPLAIN.md "Step through"): also hand over the batch after the advantage
   * stage and after every optimizer step (UpdateStats.capture). The GPU then submits the update in
   * pieces with a readback after each; without it an update is one submit, as always.
   */
  capture?: boolean;
}

/** The parameters around one optimizer step, summarized (the whole vectors would dwarf the batch). */
export interface ParamStep {
  /** L2 norms of the parameters before and after the step, of the change, and its largest entry. */
  normBefore: number;
  normAfter: number;
  deltaNorm: number;
  deltaMax: number;
}

/** One optimizer step as step-through shows it: the batch after it, its gradient norm, ESS and update. */
export interface StepCapture {
  step: StepRef;
  /** The batch tensors after the step: its minibatch's rows hold this step's log-probs, ratios, clips and losses. */
  tensors: BatchTensors;
  /** The global gradient norm before clipping. */
  gradNorm: number;
  /** The ESS its learning-rate rule read and the factor it applied (1 without VCPO). */
  ess: number;
  lrScale: number;
  params: ParamStep;
}

/** The batch at the update's stage boundaries (UpdateInput.capture). */
export interface UpdateCapture {
  /** After the prepare phase: answer scores, old, reference and rollout log-probs, the advantage. */
  prepared: BatchTensors;
  steps: StepCapture[];
}

/** Everything that changes while training: enough to resume a run exactly. */
export interface ModelState {
  params: Float32Array;
  /** The reference policy of the KL term. */
  ref: Float32Array;
  /** Adam moments. */
  m: Float32Array;
  v: Float32Array;
  /** Optimizer steps taken (Adam's bias correction). */
  adamStep: number;
  /** PPO: the critic table. */
  critic?: Float32Array;
}

export type UpdateStats = StatsOut & MismatchStats & {
  grad_norm: number;
  /** ARLArena's diagnosis (kernels/stats/negOutShare.ts) over the last epoch's rows. */
  neg_out_grad_share: number;
  /**
   * ESS / N of the sequence IS weights of the rollout policy at the update's start (1 when
   * rollouts are fresh), the mean over minibatches.
   */
  ess_rollout: number;
  /** The factor the learning rate was scaled by (VCPO; 1 otherwise), the mean over optimizer steps. */
  lr_scale: number;
  /**
   * Both per optimizer step (epoch, then SeeUPO's turn stage, then minibatch): the ESS the step's
   * learning-rate rule read and the factor it applied. VCPO measures each step's own minibatch at
   * the step's own parameters; without it, the step's minibatch at the update's start, factor 1.
   */
  ess_step: number[];
  lr_scale_step: number[];
  /** Health bits (kernels/stats/finiteCheck.ts HEALTH): NaN or Inf in the loss, gradients or parameters. */
  non_finite: number;
  /** The state after this update, when `snapshot` was asked for. */
  state?: ModelState;
  /** The batch at each stage boundary, when `capture` was asked for. */
  capture?: UpdateCapture;
};

/** ParamStep of the parameters `before` and `after` one optimizer step (float64 sums). */
export function paramStep(before: Float32Array, after: Float32Array): ParamStep {
  let nb = 0;
  let na = 0;
  let nd = 0;
  let dmax = 0;
  for (let i = 0; i < after.length; i++) {
    const d = after[i]! - before[i]!;
    nb += before[i]! * before[i]!;
    na += after[i]! * after[i]!;
    nd += d * d;
    dmax = Math.max(dmax, Math.abs(d));
  }
  return { normBefore: Math.sqrt(nb), normAfter: Math.sqrt(na), deltaNorm: Math.sqrt(nd), deltaMax: dmax };
}

/** Per-token tensors of the last update, for the batch dump and the trajectory inspector. */
export interface BatchTensors {
  seq: Int32Array;
  logp: Float32Array;
  logpOld: Float32Array;
  logpRef: Float32Array;
  entropy: Float32Array;
  sumP2: Float32Array;
  adv: Float32Array;
  ratio: Float32Array;
  clip: Int32Array;
  loss: Float32Array;
  /** [N * maxTurns] the per-turn rewards the advantage used (with IGPO's information gain). */
  turnReward: Float32Array;
  /** Log-probs under the distribution that drew each token (logpOld unless rollouts are stale or the sampler is not the trainer). */
  logpRollout: Float32Array;
  /** The old policy's entropy and sum of squared probabilities at each row. */
  entropyOld: Float32Array;
  sumP2Old: Float32Array;
  /** Each row's KL term (the configured estimator), at the last optimizer step. */
  kl: Float32Array;
  /** [N] each trajectory's squared score norm, the closed form VCPO's baseline weighs by. */
  g2: Float32Array;
  /** PPO: the critic's value of each row's state (before this update) and the GAE return. */
  value?: Float32Array;
  ret?: Float32Array;
  /** IGPO: [N * maxTurns * span] the teacher-forced answer-token log-probs, (n, k, slot) order. */
  answerLogp?: Float32Array;
  /**
   * A rollout correction's (docs/METHODS.md 5.19): each row's IS weight as the reference gives it
   * (1 without an IS level; GMPO's loss takes its trajectory's geometric mean), and 1 where the
   * row stayed in the loss, 0 where its rejection took it out (or it never was in).
   */
  isWeight?: Float32Array;
  rsKeep?: Float32Array;
}

export interface Backend {
  readonly kind: 'gpu' | 'cpu';
  readonly label: string;
  /** Replaces the whole token buffer ([N * L], prompts filled, the rest PAD). */
  writeSequences(seq: Int32Array): void;
  /** Samples the actionLen tokens of `turn` for every trajectory; returns them ([N * actionLen]). */
  sampleTurn(turn: number, iter: number): Promise<Int32Array>;
  /** Overwrites one turn's tokens ([N * (actionLen + obsLen)]): accepted actions, then observations. */
  writeTurn(turn: number, tokens: Int32Array): void;
  /**
   * The whole update: old and reference log-probs, advantages, epochs x minibatches of
   * (forward, loss, backward, clip, Adam), then statistics. One readback.
   */
  update(input: UpdateInput): Promise<UpdateStats>;
  readParams(): Promise<Float32Array>;
  /** The model and optimizer state now (one readback), e.g. to carry a run into a changed config. */
  snapshot(): Promise<ModelState>;
  /** Overwrites the model and optimizer state (resume, roll back after a NaN or a lost device). */
  restore(state: ModelState): void;
  /** ProRL: the reference policy becomes the current one, and Adam's moments and step restart. */
  resetReference(): void;
  /** Reliability tests: writes a NaN into the first parameter, as a numerical blow-up would. */
  injectNaN(): void;
  readBatch(): Promise<BatchTensors>;
  destroy(): void;
}

/** Position helpers shared by both backends and the trainer. */
export function makeRowTables(s: Pick<RunShape, 'N' | 'L' | 'promptLen' | 'actionLen' | 'obsLen' | 'maxTurns'>): {
  trainRowPos: Uint32Array;
  rolloutRowPos: Uint32Array[];
} {
  const Tp = s.maxTurns * s.actionLen;
  const pos = (turn: number, slot: number) => s.promptLen + turn * (s.actionLen + s.obsLen) + slot;
  const trainRowPos = new Uint32Array(s.N * Tp);
  for (let n = 0; n < s.N; n++) {
    for (let j = 0; j < Tp; j++) {
      trainRowPos[n * Tp + j] = n * s.L + pos(Math.floor(j / s.actionLen), j % s.actionLen);
    }
  }
  const rolloutRowPos: Uint32Array[] = [];
  for (let t = 0; t < s.maxTurns; t++) {
    for (let a = 0; a < s.actionLen; a++) {
      rolloutRowPos.push(Uint32Array.from({ length: s.N }, (_, n) => n * s.L + pos(t, a)));
    }
  }
  return { trainRowPos, rolloutRowPos };
}

/**
 * The ESS figures of one update from its (ESS, lr factor) pairs: one per minibatch at the update's
 * start, and (VCPO) one per optimizer step, else null: each step then reads its minibatch's.
 */
/**
 * Whether the rollout policy's log-probs differ from the old policy's, so that the update computes
 * them in a stage and a buffer of their own: stale parameters, or a sampler that is not the
 * trainer. Otherwise they are the old log-probs, the same buffer.
 */
export const rolloutLogprobsApart = (s: RunShape): boolean => s.staleness > 0 || samplerActive(s.sampler);

export function essOfUpdate(
  start: ReadonlyArray<readonly [number, number]>,
  perStep: ReadonlyArray<readonly [number, number]> | null,
  steps: number,
): Pick<UpdateStats, 'ess_rollout' | 'lr_scale' | 'ess_step' | 'lr_scale_step'> {
  const step = Array.from({ length: steps }, (_, s) => (perStep ? perStep[s]! : start[s % start.length]!));
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, x) => a + x, 0) / xs.length : 1);
  return {
    ess_rollout: mean(start.map((x) => x[0])),
    lr_scale: mean(step.map((x) => x[1])),
    ess_step: step.map((x) => x[0]),
    lr_scale_step: step.map((x) => x[1]),
  };
}
