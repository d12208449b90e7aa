/**
 * The one shared trainer loop (DESIGN.md "One training iteration"). It knows tasks and methods, not
 * backends: it drives any `Backend` through the same calls.
 *
 *   sample B tasks x G rollouts -> roll out turn by turn (GPU samples, TS env answers)
 *   -> rewards -> advantage -> epochs x minibatches of clipped-surrogate updates -> metrics
 */
import { initParams, type MlpDims } from '../kernels/mlp';
import { healthNames, type HealthQuantity } from '../kernels/finiteCheck';
import type { Backend, BatchTensors, ModelState, RunShape } from './backend';
import { makeRowTables } from './backend';
import type { RunConfig } from './config';
import { createEnv, PAD, seqLen, type EpisodeBatch, type TaskEnv } from './envs';
import { aggregationWeights, minibatchRanges } from './lossAgg';
import { ADV_HIST_RANGE, histEdges, LOGRATIO_HIST_RANGE, type MetricRow } from './metrics';
import { createRng } from './rng';

export const ADAM_EPS = 1e-8;

export function modelDims(cfg: RunConfig, env: TaskEnv): MlpDims {
  return { V: env.vocab.length, K: cfg.model.context, D: cfg.model.embed, H: cfg.model.hidden };
}

/** Everything static about a run, derived once from its config. */
export function buildShape(cfg: RunConfig, env: TaskEnv): RunShape {
  const l = env.layout;
  const N = cfg.batch * cfg.group;
  const L = seqLen(l);
  const tables = makeRowTables({ N, L, ...l });
  const grpo = cfg.methodParams.grpo;
  return {
    dims: modelDims(cfg, env),
    N,
    group: cfg.group,
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
    epochs: cfg.epochs,
    optim: { beta1: cfg.beta1, beta2: cfg.beta2, eps: ADAM_EPS, maxGradNorm: cfg.maxGradNorm },
    loss: { clipLow: cfg.clipLow, clipHigh: cfg.clipHigh, dualClip: cfg.dualClip, klCoef: cfg.klCoef, agg: cfg.lossAgg },
    grpo: { scaleStd: grpo.scaleStd as boolean, unbiasedStd: grpo.unbiasedStd as boolean, eps: grpo.eps as number },
  };
}

/** The seeded initial weights of a run (the same on every backend). */
export function initialParams(cfg: RunConfig, env: TaskEnv): Float32Array {
  return initParams(modelDims(cfg, env), createRng(cfg.seed).fork(0x1a17));
}

export type BackendFactory = (shape: RunShape, params: Float32Array) => Backend | Promise<Backend>;

export interface LastBatch {
  iter: number;
  episodes: EpisodeBatch;
  rewards: Float32Array;
  mask: Float32Array;
  lr: number;
  loss: number;
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
}

export const DEFAULT_SNAPSHOT_EVERY = 10;

export interface Trainer {
  readonly config: RunConfig;
  readonly env: TaskEnv;
  readonly shape: RunShape;
  readonly backend: Backend;
  /** Iterations done so far. */
  readonly iter: number;
  step(): Promise<MetricRow>;
  readonly lastBatch: LastBatch | null;
  /** The latest snapshot known to be finite. */
  readonly lastGood: TrainerSnapshot;
  /** A snapshot of the state right now (one readback), e.g. to carry the run into a changed config. */
  snapshotNow(): Promise<TrainerSnapshot>;
  /** One iteration's batch as the JSON contract of DESIGN.md ("The batch dump"). */
  dumpBatch(): Promise<BatchDump>;
  destroy(): void;
}

const now = (): number => (typeof performance !== 'undefined' ? performance.now() : Date.now());

export async function createTrainer(cfg: RunConfig, makeBackend: BackendFactory, opts: TrainerOptions = {}): Promise<Trainer> {
  const env = createEnv(cfg);
  const shape = buildShape(cfg, env);
  const init = initialParams(cfg, env);
  const backend = await makeBackend(shape, init);
  const { N, L, Tp, actionLen, obsLen, promptLen } = shape;
  const advEdges = histEdges(ADV_HIST_RANGE);
  const ratioEdges = histEdges(LOGRATIO_HIST_RANGE);
  const snapshotEvery = Math.max(1, opts.snapshotEvery ?? DEFAULT_SNAPSHOT_EVERY);
  let lastGood: TrainerSnapshot = opts.resume ?? {
    iter: 0,
    state: { params: init, ref: Float32Array.from(init), m: new Float32Array(init.length), v: new Float32Array(init.length), adamStep: 0 },
  };
  if (opts.resume) backend.restore(opts.resume.state);
  let iter = lastGood.iter;
  let lastBatch: LastBatch | null = null;

  async function step(): Promise<MetricRow> {
    const t0 = now();
    iter++;
    // ALGO LOGIC: sample tasks, seeded by (seed, iter) so any iteration can be reproduced; the task
    // also gets the iterations done so far (the clock of curricula such as ZeroSearch's noise).
    const episodes = env.sample(cfg.batch, cfg.group, createRng(cfg.seed).fork(iter), iter - 1);
    const seq = new Int32Array(N * L).fill(PAD);
    for (let n = 0; n < N; n++) seq.set(episodes.prompt.subarray(n * promptLen, (n + 1) * promptLen), n * L);
    backend.writeSequences(seq);

    // Roll out in lockstep: the backend samples a turn, the task answers.
    const mask = new Float32Array(N * Tp);
    const w = actionLen + obsLen;
    for (let turn = 0; turn < shape.maxTurns; turn++) {
      if (episodes.done.every((d) => d === 1)) break;
      const actions = await backend.sampleTurn(turn, iter);
      const res = episodes.step(turn, actions);
      const block = new Int32Array(N * w);
      for (let n = 0; n < N; n++) {
        for (let a = 0; a < actionLen; a++) {
          const keep = res.actionMask[n * actionLen + a]!;
          block[n * w + a] = keep ? actions[n * actionLen + a]! : PAD;
          mask[n * Tp + turn * actionLen + a] = keep;
        }
        block.set(res.obs.subarray(n * obsLen, (n + 1) * obsLen), n * w + actionLen);
      }
      backend.writeTurn(turn, block);
    }

    // Update.
    const rewards = Float32Array.from(episodes.reward);
    const weights = aggregationWeights(mask, Tp, shape.minibatches, cfg.lossAgg);
    const lr = cfg.lr;
    const s = await backend.update({ iter, lr, rewards, mask, weights, snapshot: iter % snapshotEvery === 0 });
    if (s.non_finite) {
      const failed = iter;
      backend.restore(lastGood.state);
      iter = lastGood.iter;
      throw new NonFiniteError(failed, healthNames(s.non_finite), lastGood.iter);
    }
    if (s.state) {
      lastGood = { iter, state: s.state };
      opts.onSnapshot?.(lastGood);
    }

    // PLUMBING: the metrics row.
    let rSum = 0;
    let succ = 0;
    for (let n = 0; n < N; n++) {
      rSum += rewards[n]!;
      succ += episodes.success[n]!;
    }
    lastBatch = { iter, episodes, rewards, mask, lr, loss: s.loss };
    return {
      iter,
      reward_mean: rSum / N,
      success_rate: succ / N,
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
      lr,
      loss: s.loss,
      tokens: s.tokens,
      ms: now() - t0,
      adv_hist: s.adv_hist,
      adv_hist_edges: advEdges,
      ratio_hist: s.ratio_hist,
      ratio_hist_edges: ratioEdges,
    };
  }

  async function dumpBatch(): Promise<BatchDump> {
    if (!lastBatch) throw new Error('no batch yet: run at least one iteration');
    return buildBatchDump(cfg, env, shape, lastBatch, await backend.readBatch());
  }

  return {
    config: cfg,
    env,
    shape,
    backend,
    get iter() {
      return iter;
    },
    step,
    get lastBatch() {
      return lastBatch;
    },
    get lastGood() {
      return lastGood;
    },
    async snapshotNow() {
      return { iter, state: await backend.snapshot() };
    },
    dumpBatch,
    destroy: () => backend.destroy(),
  };
}

export interface BatchDump {
  version: 1;
  iter: number;
  config: RunConfig;
  lr: number;
  loss: number;
  trajs: Array<{
    id: number;
    group: number;
    role: null;
    reward: number;
    reward_true: number;
    /** Per turn taken, where the task defines them (the tools task's checklist rewards R_t). */
    turn_rewards?: number[];
    /** Per turn taken, the checklist with the judge's labels (tools task). */
    checklist?: Array<Array<{ item: string; weight: number; sat: boolean; sat_true: boolean; strict: boolean }>>;
    /** Multi-agent tasks: the role that acted at each turn taken (roles are per turn, so `role` stays null). */
    turn_roles?: string[];
    /** Multi-agent tasks: each role's own reward, by role name. */
    role_rewards?: Record<string, number>;
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
    }>;
  }>;
}

function buildBatchDump(cfg: RunConfig, env: TaskEnv, shape: RunShape, b: LastBatch, t: BatchTensors): BatchDump {
  const { N, Tp } = shape;
  const trajs: BatchDump['trajs'] = [];
  for (let n = 0; n < N; n++) {
    const tokens: BatchDump['trajs'][number]['tokens'] = [];
    for (let j = 0; j < Tp; j++) {
      const r = n * Tp + j;
      if (!b.mask[r]) continue;
      const tok = t.seq[shape.trainRowPos[r]!]!;
      tokens.push({
        tok,
        text: env.vocab[tok] ?? '?',
        turn: Math.floor(j / shape.actionLen),
        mask: 1,
        logp_old: t.logpOld[r]!,
        logp: t.logp[r]!,
        logp_ref: t.logpRef[r]!,
        entropy: t.entropy[r]!,
        sum_p2: t.sumP2[r]!,
        adv: t.adv[r]!,
        ratio: t.ratio[r]!,
        clip: t.clip[r]!,
        loss: t.loss[r]!,
      });
    }
    const ep = b.episodes;
    const taken = ep.turns(n).length;
    const extra: Partial<BatchDump['trajs'][number]> = {};
    if (ep.turnRewards) extra.turn_rewards = Array.from(ep.turnRewards.subarray(n * shape.maxTurns, n * shape.maxTurns + taken));
    if (ep.checklist) {
      extra.checklist = ep.checklist[n]!.map((c) =>
        c.items.map((it, i) => ({ item: it.id, weight: it.weight, sat: c.sat[i] === 1, sat_true: c.satTrue[i] === 1, strict: it.strict })),
      );
    }
    if (ep.turnRole && env.roles) {
      extra.turn_roles = Array.from(ep.turnRole.subarray(n * shape.maxTurns, n * shape.maxTurns + taken), (r) => env.roles![r] ?? '?');
    }
    if (ep.roleReward && env.roles) {
      const R = env.roles.length;
      extra.role_rewards = Object.fromEntries(env.roles.map((name, k) => [name, ep.roleReward![n * R + k]!]));
    }
    trajs.push({
      id: n,
      group: Math.floor(n / shape.group),
      role: null,
      reward: b.rewards[n]!,
      reward_true: ep.rewardTrue[n]!,
      ...extra,
      text: ep.describe(n),
      tokens,
    });
  }
  return { version: 1, iter: b.iter, config: cfg, lr: b.lr, loss: b.loss, trajs };
}
