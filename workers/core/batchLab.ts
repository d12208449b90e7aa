/**
 * Batch lab: one frozen batch (the last iteration's trajectories) re-scored under several method
 * sets at once, without training -- per token, the advantage, the aggregation weight and the
 * resulting gradient weight d(loss)/d(logp) at the current policy, side by side.
 *
 * It runs in the worker on the kernels' CPU references (an analysis view, not the training path):
 * the current parameters are read once, log-probs, entropies and the reference log-probs are
 * computed once, and each method set applies its reward, filtering, advantage, aggregation and
 * loss stages to the same data. Sampling-stage methods (DARS, GEC, ReGFT, DAPO's refill) cannot
 * change rollouts that already happened; their notes say what they would do instead.
 */
import { forwardCpu } from '../../kernels/model/mlp';
import type { AdvantageData, RunShape, UpdateInput } from './backend';
import type { RunConfig } from './config';
import { methodDef } from './methods';
import { aggregationWeights } from './lossAgg';
import { resolvePlan, type Plan } from './plan';
import { createRng } from './rng';
import { groupAllEqual, pfppoCounts } from './selection';
import { planShape, type Trainer } from './trainer';
import { rewardTurns } from './turnRewards';
import { cpuTensors, seqLogSegments, startCpuUpdate, type CpuUpdate } from './update/cpuUpdate';
import type { StagePart, StepRef } from './update/stage';
import { stagesOf, UPDATE_STAGES, walkUpdate } from './update/stages';

export interface LabColumn {
  /** The method set, as in the config. */
  methods: string[];
  /** [N * Tp] per-token advantage. */
  adv: Float32Array;
  /** [N * Tp] aggregation weight (0 where masked or filtered). */
  weight: Float32Array;
  /** [N * Tp] d(loss)/d(logp) at the current policy: what each token pushes on its log-prob. */
  grad: Float32Array;
  /** [N * maxTurns] the turn rewards this set uses (IGPO, CM2 turn level, GiGPO), else zeros. */
  turnRewards: Float32Array;
  /** What this set does that a frozen batch cannot show, or filtered groups. */
  notes: string[];
}

export interface LabResult {
  iter: number;
  N: number;
  Tp: number;
  maxTurns: number;
  actionLen: number;
  /** [N * Tp] 1 on policy tokens. */
  mask: Float32Array;
  /** [N * Tp] the token id at each policy row. */
  tokens: Int32Array;
  /** [N] group ordinal and reward of each trajectory. */
  group: Uint32Array;
  reward: Float32Array;
  vocab: readonly string[];
  columns: LabColumn[];
}


/** What the lab runs of the update: no gradient, no optimizer step, no statistics. */
const LAB_PARTS: ReadonlySet<StagePart> = new Set(['logprobs', 'reward', 'advantage', 'ratio', 'loss']);

export async function rescoreBatch(t: Trainer, configs: RunConfig[]): Promise<LabResult> {
  const b = t.lastBatch;
  if (!b) throw new Error('batch lab: no batch yet; run at least one iteration');
  const { shape, env } = t;
  const { N, Tp } = shape;
  for (const cfg of configs) {
    if (cfg.task !== t.config.task) throw new Error(`batch lab: ${cfg.methods.join('+')} is for task ${cfg.task}, the batch is from ${t.config.task}`);
  }
  const { state } = await t.snapshotNow();
  // The log-probs under the current and the reference parameters, once for every column: on a
  // frozen batch the rollout and old policies are the current one.
  const base = labUpdate({ ...shape, staleness: 0 }, state.params, state.ref, b.seq, b.adv);
  const logprobs = UPDATE_STAGES.filter((s) => s.phase === 'prepare' && s.part === 'logprobs' && s.enabled(base.shape));
  walkUpdate(logprobs, [], {}, (i) => logprobs[i]!.cpu(base, labInput(b.mask, b.adv, new Float32Array(N * Tp), shape), null));
  const columns = configs.map((cfg) => rescoreColumn(t, base, cfg));
  const group = new Uint32Array(N);
  let g = -1;
  for (let n = 0; n < N; n++) group[n] = b.adv.groupStart[n] === n ? ++g : g;
  const mask = b.mask;
  const tokens = Int32Array.from(shape.trainRowPos, (p, i) => (mask[i] ? b.seq[p]! : 0));
  return { iter: b.iter, N, Tp, maxTurns: shape.maxTurns, actionLen: shape.actionLen, mask, tokens, group, reward: b.adv.reward, vocab: env.vocab, columns };
}

/** One method set on the frozen batch: its reward, filtering, advantage, aggregation and loss stages. */
function rescoreColumn(t: Trainer, base: CpuUpdate, cfg: RunConfig): LabColumn {
  const b = t.lastBatch!;
  const { N, Tp } = t.shape;
  const T = t.shape.maxTurns;
  const plan = resolvePlan(cfg);
  const notes = cfg.methods.flatMap((m) => methodDef(m).labNote ?? []);
  // One minibatch, one epoch, on-policy (every ratio is 1 on a frozen batch), no critic.
  const shape: RunShape = { ...t.shape, ...planShape(plan, N * T, b.episodes.answerSpan), minibatches: [[0, N]], epochs: 1, staleness: 0, critic: null };
  const layout = { N, L: shape.L, Tp, promptLen: shape.promptLen, actionLen: shape.actionLen, obsLen: shape.obsLen, maxTurns: T };
  const { turnReward, turnKey, score } = rewardTurns(plan, b.episodes, b.seq, b.adv.reward, b.adv.turns, layout);
  const { mask, mult, note } = labFilter(plan, b.adv, b.live, b.mask, Tp, shape.group, createRng(cfg.seed).fork(b.iter));
  if (note) notes.push(note);
  const weight = aggregationWeights(mask, Tp, [[0, N]], plan.lossAgg, mult, plan.stepRows ? shape.actionLen : Tp);
  const inp = { ...labInput(mask, { ...b.adv, turnReward, turnKey }, weight, shape), ...(score ? { score } : {}) };
  const c: CpuUpdate = {
    ...base,
    shape,
    adv: inp.adv,
    seqLog: new Float32Array(N * seqLogSegments(shape)),
    t: { ...cpuTensors(shape), seq: b.seq, logpOld: base.t.logpOld, logpRef: base.t.logpRef, entropyOld: base.t.entropyOld, sumP2Old: base.t.sumP2Old, logpRollout: base.t.logpRollout },
  };
  const stages = stagesOf(shape).filter((s) => LAB_PARTS.has(s.part) && !(s.phase === 'prepare' && s.part === 'logprobs'));
  // SeeUPO trains one turn per stage: each row's gradient weight is its own turn's stage's.
  const turnMode = shape.loss.ratio.mode === 'turn';
  const grad = new Float32Array(N * Tp);
  const steps: StepRef[] = (turnMode ? [...Array(T).keys()] : [0]).map((turn) => ({ index: 0, epoch: 0, turn, minibatch: 0, n0: 0, n1: N }));
  walkUpdate(stages, steps, inp, (i, step) => {
    stages[i]!.cpu(c, inp, step);
    if (stages[i]!.part !== 'loss') return;
    for (let r = 0; r < N * Tp; r++) if (!turnMode || Math.floor((r % Tp) / shape.actionLen) === step!.turn) grad[r] = c.t.dlogp[r]!;
  });
  if (turnMode) notes.push("SeeUPO: each turn's weights are those of its own stage (the last turn is updated first).");
  return { methods: [...cfg.methods], adv: Float32Array.from(c.t.adv), weight, grad, turnRewards: c.adv.turnReward, notes };
}

/**
 * The filtering stage on a frozen batch: all-equal groups dropped (no refill), PF-PPO's draws.
 * Returns the mask of the rows left, each row's multiplicity and what was filtered.
 */
function labFilter(plan: Plan, base: AdvantageData, live0: Uint8Array, mask0: Float32Array, Tp: number, group: number, rng: ReturnType<typeof createRng>) {
  const N = base.reward.length;
  const live = Float32Array.from(live0);
  let note: string | null = null;
  if (plan.dynamicSampling) {
    let dropped = 0;
    for (let n = 0; n < N; n++) {
      if (base.groupStart[n] !== n || !live[n]) continue;
      if (groupAllEqual(base.reward, n, base.groupSize[n]!)) {
        for (let k = 0; k < base.groupSize[n]!; k++) live[n + k] = 0;
        dropped++;
      }
    }
    note = `${dropped} all-equal group${dropped === 1 ? '' : 's'} filtered out.`;
  }
  const mask = mask0.map((x, i) => x * live[Math.floor(i / Tp)]!);
  const mult = plan.resample ? Float32Array.from(pfppoCounts(base.reward, live, group, plan.resample, rng)) : undefined;
  return { mask, mult, note };
}

/** An update input over the frozen batch: SeeUPO's stages all read the one set of weights. */
function labInput(mask: Float32Array, adv: AdvantageData, weights: Float32Array, shape: RunShape): UpdateInput {
  return { iter: 0, lr: 0, adv, mask, weights, ...(shape.loss.ratio.mode === 'turn' ? { stageWeights: Array.from({ length: shape.maxTurns }, () => weights) } : {}) };
}

/** The CPU update state of a frozen batch at parameters `params` (the rollout and old policy). */
function labUpdate(shape: RunShape, params: Float32Array, ref: Float32Array, seq: Int32Array, adv: AdvantageData): CpuUpdate {
  const none = new Float32Array(0);
  return startCpuUpdate({
    shape, params, ref, m: none, v: none, adamStep: 0, rolloutParams: params, critic: null, adv,
    forward: (p, rowPos, tokens = seq) => forwardCpu(p, shape.dims, tokens, shape.L, rowPos, shape.grammar, shape.temperature),
    paramsChanged: () => {},
    progress: () => {},
    t: { ...cpuTensors(shape), seq },
  });
}
