/**
 * The one shared trainer loop (docs/ARCHITECTURE.md "One training iteration"). It knows tasks and methods, not
 * backends: it drives any `Backend` through the same calls.
 *
 *   sample B tasks x G rollouts -> roll out turn by turn (GPU samples, TS env answers)
 *   -> rewards -> advantage -> epochs x minibatches of clipped-surrogate updates -> metrics
 */
import { initParams, type MlpDims } from '../../kernels/model/mlp';
import { healthNames, type HealthQuantity } from '../../kernels/stats/finiteCheck';
import type { AdvantageData, Backend, ModelState, RunShape, UpdateCapture, UpdateInput, UpdateStats } from './backend';
import { makeRowTables } from './backend';
import { collectBatch, turnsTaken, type RolloutLayout } from './collect';
import type { RunConfig } from './config';
import { createEnv, seqLen, type EpisodeBatch, type TaskEnv } from './envs';
import { lossWeights, minibatchRanges } from './lossAgg';
import { ADV_HIST_RANGE, histEdges, LOGRATIO_HIST_RANGE, type MetricRow } from './metrics';
import { resolvePlan, type Plan } from './plan';
import { prepareStart, pretrainedStart, type PretrainProgress, type PretrainResult } from './pretrain';
import { createRng } from './rng';
import { rewardTurns, stateKeys } from './turnRewards';

export const ADAM_EPS = 1e-8;

export function modelDims(cfg: RunConfig, env: TaskEnv): MlpDims {
  return { V: env.vocab.length, K: cfg.model.context, D: cfg.model.embed, H: cfg.model.hidden };
}

/** Everything static about a run, derived once from its config and the active methods' plan. */
export function buildShape(cfg: RunConfig, env: TaskEnv, plan: Plan = resolvePlan(cfg)): RunShape {
  const l = env.layout;
  const N = cfg.batch * plan.groupCap;
  const L = seqLen(l);
  const tables = makeRowTables({ N, L, ...l });
  return {
    dims: modelDims(cfg, env),
    N,
    group: cfg.group,
    groupCap: plan.groupCap,
    L,
    Tp: l.maxTurns * l.actionLen,
    actionLen: l.actionLen,
    obsLen: l.obsLen,
    promptLen: l.promptLen,
    maxTurns: l.maxTurns,
    ...tables,
    grammar: env.grammar,
    minibatches: minibatchRanges(N, cfg.minibatches),
    seed: cfg.seed,
    temperature: cfg.temperature,
    sampler: { precision: cfg.rollout.precision, topP: cfg.rollout.topP, topK: cfg.rollout.topK },
    epochs: cfg.epochs,
    optim: { beta1: cfg.beta1, beta2: cfg.beta2, eps: ADAM_EPS, maxGradNorm: cfg.maxGradNorm },
    ...planShape(plan, N * l.maxTurns, env.sample(1, 1, createRng(0), 0).answerSpan),
    nRoles: Math.max(env.roles?.length ?? 1, 1),
  };
}

/**
 * What the plan decides of a run's shape: the update's stages and their options. `contexts`: the
 * answer contexts IGPO would score (N * maxTurns), `answerSpan`: the task's answer slots, if any.
 */
export function planShape(plan: Plan, contexts: number, answerSpan: Uint8Array | undefined) {
  const scoreSpan = plan.infoGain && answerSpan ? answerSpan.reduce((a, b) => a + b, 0) : 0;
  return {
    loss: { ratio: plan.ratio, klCoef: plan.kl.coef, klType: plan.kl.type, agg: plan.lossAgg, stepRows: plan.stepRows },
    correction: plan.rolloutCorrection,
    adv: plan.advantage,
    whiten: plan.whiten,
    essLr: { enabled: plan.essLr !== null, rule: plan.essLr?.rule ?? 'sqrt', rhoBase: plan.essLr?.baseEss ?? 1 },
    staleness: plan.staleness,
    scoreContexts: scoreSpan ? contexts : 0,
    scoreSpan,
    igType: plan.infoGain?.igType ?? 'prob_diff',
    critic: plan.critic,
    sft: plan.hintedSft !== null,
  } satisfies Partial<RunShape>;
}

/** The seeded random weights of a run (the same on every backend): the scratch start. */
export function initialParams(cfg: RunConfig, env: TaskEnv): Float32Array {
  return initParams(modelDims(cfg, env), createRng(cfg.seed).fork(0x1a17));
}

/** The weights a run starts from: the scratch weights, or those pretrained from them (workers/core/pretrain.ts). */
export function startParams(cfg: RunConfig, env: TaskEnv, progress?: PretrainProgress): { params: Float32Array; pretrain: PretrainResult | null } {
  const scratch = initialParams(cfg, env);
  if (cfg.init.mode === 'scratch') return { params: scratch, pretrain: null };
  const pretrain = pretrainedStart(cfg, env, scratch, progress);
  return { params: pretrain.params, pretrain };
}

export type BackendFactory = (shape: RunShape, params: Float32Array) => Backend | Promise<Backend>;

export interface LastBatch {
  iter: number;
  episodes: EpisodeBatch;
  rewards: Float32Array;
  mask: Float32Array;
  lr: number;
  loss: number;
  /** The advantage stage's inputs (groups, turns, per-turn rewards). */
  adv: AdvantageData;
  /** [N * L] the batch's token sequences. */
  seq: Int32Array;
  /** [N] 1 where the row was trained on; PF-PPO's draw counts. */
  live: Uint8Array;
  mult: Float32Array;
  /** [N] PF-PPO's draw weights (null without it) and each row's origin (collect.ts ORIGINS). */
  drawWeight: Float64Array | null;
  origin: Uint8Array;
  /** Per optimizer step: the ESS its learning-rate rule read and the learning rate applied (VCPO scales it by that ESS). */
  essStep: number[];
  lrStep: number[];
}

/** A point a run can be resumed from exactly: replaying from it reproduces the same iterations. */
export interface TrainerSnapshot {
  /** Iterations done when it was taken. */
  iter: number;
  state: ModelState;
}

/** Thrown by step() when an update produced NaN or Inf; the trainer has already rolled back. */
export class NonFiniteError extends Error {
  constructor(
    readonly iter: number,
    readonly quantities: HealthQuantity[],
    readonly rolledBackTo: number,
  ) {
    super(
      `non-finite ${quantities.join(', ')} at iteration ${iter}: parameters rolled back to iteration ${rolledBackTo}. ` +
        'Lower the learning rate or the clip range, then continue.',
    );
    this.name = 'NonFiniteError';
  }
}

export interface TrainerOptions {
  /** Start from this snapshot instead of the config's initial weights. */
  resume?: TrainerSnapshot;
  /** Keep a finite snapshot every this many iterations (read back with that iteration's metrics). */
  snapshotEvery?: number;
  /** Called with every new snapshot (the UI keeps one to restart a crashed worker). */
  onSnapshot?: (s: TrainerSnapshot) => void;
  /** Called while a pretrained start trains (init=pretrained), with steps done and steps. */
  onPretrain?: PretrainProgress;
}

export const DEFAULT_SNAPSHOT_EVERY = 10;

export interface Trainer {
  readonly config: RunConfig;
  readonly env: TaskEnv;
  /** What the active methods do to each stage (resolvePlan of the config). */
  readonly plan: Plan;
  readonly shape: RunShape;
  readonly backend: Backend;
  /** The pretrained start's figures (init=pretrained), else null. */
  readonly pretrain: PretrainResult | null;
  /** Iterations done so far. */
  readonly iter: number;
  step(): Promise<MetricRow>;
  /**
   * One iteration as step() runs it, also handing over the batch at the update's stage boundaries
   * (docs/EXPLAIN.md "Step through"); lastBatch is then its final state, as after step().
   */
  stepThrough(): Promise<{ row: MetricRow; capture: UpdateCapture }>;
  readonly lastBatch: LastBatch | null;
  /** The latest snapshot known to be finite. */
  readonly lastGood: TrainerSnapshot;
  /**
   * Where a move to a new device starts: the newest snapshot from before the last iteration, so
   * that replaying to the iteration reached makes its batch again (lastGood, unless it was taken
   * at that very iteration; then the one before it).
   */
  readonly replayFrom: TrainerSnapshot;
  /** A snapshot of the state right now (one readback), e.g. to carry the run into a changed config. */
  snapshotNow(): Promise<TrainerSnapshot>;
  destroy(): void;
}

const now = (): number => (typeof performance !== 'undefined' ? performance.now() : Date.now());

export async function createTrainer(cfg: RunConfig, makeBackend: BackendFactory, opts: TrainerOptions = {}): Promise<Trainer> {
  const plan = resolvePlan(cfg);
  const env = createEnv(plan.envConfig);
  const shape = buildShape(cfg, env, plan);
  if (!opts.resume) await prepareStart(cfg);
  // The reference policy starts as the start itself: the SFT model, as in LLM RL.
  const { params: init, pretrain } = opts.resume ? { params: initialParams(cfg, env), pretrain: null } : startParams(cfg, env, opts.onPretrain);
  const backend = await makeBackend(shape, init);
  const layout: RolloutLayout = { N: shape.N, L: shape.L, Tp: shape.Tp, promptLen: shape.promptLen, actionLen: shape.actionLen, obsLen: shape.obsLen, maxTurns: shape.maxTurns };
  const snapshotEvery = Math.max(1, opts.snapshotEvery ?? DEFAULT_SNAPSHOT_EVERY);
  let lastGood: TrainerSnapshot = opts.resume ?? {
    iter: 0,
    state: { params: init, ref: Float32Array.from(init), m: new Float32Array(init.length), v: new Float32Array(init.length), adamStep: 0 },
  };
  /** The snapshot lastGood replaced (see replayFrom). */
  let previous: TrainerSnapshot | null = null;
  if (opts.resume) backend.restore(opts.resume.state);
  let iter = lastGood.iter;
  let lastBatch: LastBatch | null = null;

  async function step(): Promise<MetricRow> {
    return (await iterate(false)).row;
  }

  async function iterate(capture: boolean): Promise<{ row: MetricRow; capture?: UpdateCapture }> {
    const t0 = now();
    iter++;
    // ProRL: the reference (and Adam) restart from the current policy every resetEvery iterations.
    if (plan.refResetEvery > 0 && iter > 1 && (iter - 1) % plan.refResetEvery === 0) backend.resetReference();
    // Sampling and filtering: tasks seeded by (seed, iter), so any iteration can be reproduced.
    const c = await collectBatch({ cfg, plan, env, backend, layout }, iter);
    const { adv, score } = rewardStage(plan, shape, layout, c);
    const s = await backend.update({
      iter,
      lr: cfg.lr,
      adv,
      raw: c.sft,
      mask: c.mask,
      ...lossWeights(shape, c.mask, c.mult),
      mult: c.mult,
      ...(score ? { score } : {}),
      ...(plan.critic ? { stateKey: stateKeys(c.seq, shape.trainRowPos, c.mask, shape.L, cfg.model.context, plan.critic.size) } : {}),
      snapshot: iter % snapshotEvery === 0,
      ...(capture ? { capture } : {}),
    });
    if (s.non_finite) {
      const failed = iter;
      backend.restore(lastGood.state);
      iter = lastGood.iter;
      throw new NonFiniteError(failed, healthNames(s.non_finite), lastGood.iter);
    }
    if (s.state) {
      previous = lastGood;
      lastGood = { iter, state: s.state };
      opts.onSnapshot?.(lastGood);
    }

    // PLUMBING: the metrics row. Reward and success are the policy's own first-round rollouts.
    const lr = cfg.lr * s.lr_scale;
    lastBatch = { iter, episodes: c.ep, rewards: adv.reward, mask: c.mask, lr, loss: s.loss, adv, seq: c.seq, live: c.live, mult: c.mult, drawWeight: c.drawWeight, origin: c.origin,
      essStep: s.ess_step, lrStep: s.lr_scale_step.map((x) => cfg.lr * x) };
    return { row: metricRow(iter, c, s, lr, now() - t0), ...(s.capture ? { capture: s.capture } : {}) };
  }

  async function stepThrough(): Promise<{ row: MetricRow; capture: UpdateCapture }> {
    const r = await iterate(true);
    if (!r.capture) throw new Error(`${backend.label}: the backend handed over no stages`);
    return { row: r.row, capture: r.capture };
  }

  return {
    config: cfg,
    env,
    plan,
    shape,
    backend,
    pretrain,
    get iter() {
      return iter;
    },
    step,
    stepThrough,
    get lastBatch() {
      return lastBatch;
    },
    get lastGood() {
      return lastGood;
    },
    get replayFrom() {
      return lastGood.iter < iter || !previous ? lastGood : previous;
    },
    async snapshotNow() {
      return { iter, state: await backend.snapshot() };
    },
    destroy: () => backend.destroy(),
  };
}

type Collected = Awaited<ReturnType<typeof collectBatch>>;

/** The reward stage: per-turn rewards, roles and anchor keys of the batch (docs/METHODS.md 6). */
function rewardStage(plan: Plan, shape: RunShape, layout: RolloutLayout, c: Collected): { adv: AdvantageData; score?: { seqs: Int32Array; rows: Uint32Array } } {
  const { N } = shape;
  const T = shape.maxTurns;
  const ep = c.ep;
  const turns = new Uint32Array(N);
  for (let n = 0; n < N; n++) if (c.live[n]) turns[n] = turnsTaken(c.mask, n, layout);
  // ReGFT's fine-tuning stage: the kept (correct) rollouts get advantage 1.
  const reward = c.sft ? Float32Array.from(ep.success) : Float32Array.from(ep.reward);
  const { turnReward, turnKey, score } = rewardTurns(plan, ep, c.seq, reward, turns, layout);
  const turnRole = ep.turnRole ? Int32Array.from(ep.turnRole) : new Int32Array(N * T).fill(-1);
  const roleRewards = ep.roleReward ? Float32Array.from(ep.roleReward) : new Float32Array(N * shape.nRoles);
  return { adv: { reward, groupStart: c.groupStart, groupSize: c.groupSize, turns, turnReward, turnRole, turnKey, roleRewards }, ...(score ? { score } : {}) };
}

const ADV_EDGES = histEdges(ADV_HIST_RANGE);
const RATIO_EDGES = histEdges(LOGRATIO_HIST_RANGE);

/** One iteration's metrics row (docs/ARCHITECTURE.md "Metric names"), in the contract's key order. */
function metricRow(iter: number, c: Collected, s: UpdateStats, lr: number, ms: number): MetricRow {
  return {
    iter,
    reward_mean: c.firstPass.reward,
    success_rate: c.firstPass.success,
    adv_mean: s.adv_mean,
    adv_std: s.adv_std,
    adv_zero_frac: s.adv_zero_frac,
    groups_all_equal_frac: s.groups_all_equal_frac,
    ratio_mean: s.ratio_mean,
    ratio_min: s.ratio_min,
    ratio_max: s.ratio_max,
    clip_frac: s.clip_frac_low + s.clip_frac_high,
    clip_frac_low: s.clip_frac_low,
    clip_frac_high: s.clip_frac_high,
    entropy: s.entropy,
    kl_ref: s.kl_ref,
    grad_norm: s.grad_norm,
    ess: s.ess,
    ess_rollout: s.ess_rollout,
    lr,
    loss: s.loss,
    neg_out_grad_share: s.neg_out_grad_share,
    mismatch_logratio: s.mismatch_logratio,
    mismatch_k3_kl: s.mismatch_k3_kl,
    mismatch_chi2_token: s.mismatch_chi2_token,
    mismatch_chi2_seq: s.mismatch_chi2_seq,
    mismatch_ppl_ratio: s.mismatch_ppl_ratio,
    tokens: s.tokens,
    rollouts: c.rollouts,
    ms,
    adv_hist: s.adv_hist,
    adv_hist_edges: ADV_EDGES,
    ratio_hist: s.ratio_hist,
    ratio_hist_edges: RATIO_EDGES,
    mismatch_hist: s.mismatch_hist,
    mismatch_hist_edges: RATIO_EDGES,
  };
}
