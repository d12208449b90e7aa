/**
 * What the CPU side of every update stage reads and writes: the model, the batch's per-row
 * tensors (kept for the dump, as the GPU keeps its buffers) and what one stage hands the next
 * within an update. The CPU backend makes one per update over its run's arrays; the batch lab makes
 * one over a frozen batch.
 */
import type { ForwardOut } from '../../../kernels/model/mlp';
import type { TokenStats } from '../../../kernels/softmax/tokenStats';
import type { MismatchStats } from '../../../kernels/stats/mismatchStats';
import type { StatsOut } from '../../../kernels/stats/stats';
import type { TrajStats } from '../../../kernels/stats/trajStats';
import type { AdvantageData, BatchTensors, RunShape } from '../backend';

/** The per-row arrays of a run: the dump's (last update's values), the loss gradient and the sequence log-ratios. */
export type CpuTensors = Omit<BatchTensors, 'value' | 'ret' | 'answerLogp'> &
  Partial<Pick<BatchTensors, 'value' | 'ret' | 'answerLogp'>> & {
    /** [R] d(loss)/d(logp) of each row's last loss evaluation (the last epoch's, for ARLArena's diagnosis). */
    dlogp: Float32Array;
  };

/** The per-row arrays of a run of `shape`, zeros. */
export function cpuTensors(shape: RunShape): CpuTensors {
  const R = shape.N * shape.Tp;
  return {
    seq: new Int32Array(shape.N * shape.L),
    logp: new Float32Array(R),
    logpOld: new Float32Array(R),
    logpRef: new Float32Array(R),
    entropy: new Float32Array(R),
    sumP2: new Float32Array(R),
    adv: new Float32Array(R),
    ratio: new Float32Array(R),
    clip: new Int32Array(R),
    loss: new Float32Array(R),
    turnReward: new Float32Array(shape.N * shape.maxTurns),
    logpRollout: new Float32Array(R),
    entropyOld: new Float32Array(R),
    sumP2Old: new Float32Array(R),
    kl: new Float32Array(R),
    g2: new Float32Array(shape.N),
    dlogp: new Float32Array(R),
    ...(shape.correction ? { isWeight: new Float32Array(R), rsKeep: new Float32Array(R) } : {}),
  };
}

export interface CpuUpdate {
  readonly shape: RunShape;
  /** Model and optimizer state; the optimizer stage writes params, m, v and adamStep. */
  readonly params: Float32Array;
  readonly ref: Float32Array;
  readonly m: Float32Array;
  readonly v: Float32Array;
  adamStep: number;
  /** The parameters rollouts came from (params unless rollouts are stale). */
  readonly rolloutParams: Float32Array;
  /** PPO's critic table, or null. */
  readonly critic: Float32Array | null;
  /** The forward pass of parameters `p` at rows `rowPos` of `tokens` (the batch's seq by default). */
  forward(p: Float32Array, rowPos: Uint32Array, tokens?: Int32Array | Uint32Array): ForwardOut;
  /** Called after every write to params: first-layer tables made from them are stale. */
  paramsChanged(): void;
  /** Called between stages so a page can tell the worker is alive. */
  progress(): void;
  readonly t: CpuTensors;
  /** The advantage stage's inputs; IGPO's stage replaces turnReward with the information gain. */
  adv: AdvantageData;
  /** The old policy's forward and token statistics over every training row (the first step's too). */
  old: ForwardOut | null;
  oldStats: TokenStats | null;
  /** The rollout policy's log-probs where rollouts are stale, else null (they are the old ones). */
  rolloutLogp: Float32Array | null;
  trajStats: TrajStats | null;
  /** (ESS, lr factor) of each minibatch at the update's start, and (VCPO) of each optimizer step. */
  essMinibatch: Array<readonly [number, number]>;
  essSteps: Array<readonly [number, number]> | null;
  /** [N * segments] sequence log-ratios of the current step. */
  readonly seqLog: Float32Array;
  /** The current optimizer step's forward (h, z) and token statistics, rows [n0 * Tp, n1 * Tp). */
  stepForward: Pick<ForwardOut, 'h' | 'z'> & { firstOf?: Int32Array } | null;
  stepStats: TokenStats | null;
  /** The current step's gradient and the last step's norm. */
  grads: Float32Array | null;
  gradNorm: number;
  /** Health bits (kernels/stats/finiteCheck.ts HEALTH). */
  health: number;
  stats: StatsOut | null;
  negOutShare: number;
  /** The sampler's distance from the trainer over the batch (kernels/stats/mismatchStats.ts). */
  mismatch: MismatchStats | null;
  /** The collected loss mask, where the rollout correction replaced the update's (null: it did not). */
  sampledMask: Float32Array | null;
}

/** What an update's state starts from; the rest starts empty. */
type CpuUpdateStart = Pick<CpuUpdate, 'shape' | 'params' | 'ref' | 'm' | 'v' | 'adamStep' | 'rolloutParams' | 'critic' | 'forward' | 'paramsChanged' | 'progress' | 't' | 'adv'>;

/** The state of one update over `start`'s model and tensors. */
export function startCpuUpdate(start: CpuUpdateStart): CpuUpdate {
  const { shape } = start;
  return {
    ...start,
    old: null,
    oldStats: null,
    rolloutLogp: null,
    trajStats: null,
    essMinibatch: [],
    essSteps: shape.essLr.enabled ? [] : null,
    seqLog: new Float32Array(shape.N * seqLogSegments(shape)),
    stepForward: null,
    stepStats: null,
    grads: null,
    gradNorm: 0,
    health: 0,
    stats: null,
    negOutShare: 0,
    mismatch: null,
    sampledMask: null,
  };
}

/** A copy of the dump's tensors (slice(): structuredClone serializes, about 0.27 s for 65,536 rollouts' 23 MB). */
export function copyTensors(t: CpuTensors): BatchTensors {
  return {
    seq: t.seq.slice(),
    logp: t.logp.slice(),
    logpOld: t.logpOld.slice(),
    logpRef: t.logpRef.slice(),
    entropy: t.entropy.slice(),
    sumP2: t.sumP2.slice(),
    adv: t.adv.slice(),
    ratio: t.ratio.slice(),
    clip: t.clip.slice(),
    loss: t.loss.slice(),
    turnReward: t.turnReward.slice(),
    logpRollout: t.logpRollout.slice(),
    entropyOld: t.entropyOld.slice(),
    sumP2Old: t.sumP2Old.slice(),
    kl: t.kl.slice(),
    g2: t.g2.slice(),
    ...(t.value ? { value: t.value.slice(), ret: t.ret!.slice() } : {}),
    ...(t.answerLogp ? { answerLogp: t.answerLogp.slice() } : {}),
    ...(t.isWeight && t.rsKeep ? { isWeight: t.isWeight.slice(), rsKeep: t.rsKeep.slice() } : {}),
  };
}

/** The log-probs of the policy that sampled the batch. */
export const rolloutLogp = (c: CpuUpdate): Float32Array => c.rolloutLogp ?? c.oldStats!.logp;

/** Segments of seqLog per trajectory: one per turn for SeeUPO's turn and SAMPO's step modes. */
export const seqLogSegments = (shape: RunShape): number => (shape.loss.ratio.mode === 'turn' || shape.loss.ratio.mode === 'step' ? shape.maxTurns : 1);
