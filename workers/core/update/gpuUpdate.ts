/**
 * What the GPU side of every update stage binds to: the run's buffers, made once when the backend
 * is made (workers/core/gpuBackend.ts), the kernels it selected, and the first-layer tables of its
 * parameter sets. A stage's own scratch is made by the stage itself (`f32`), also once.
 */
import { paramLayout } from '../../../kernels/model/mlp';
import { backwardScratchWords, slotTableWords } from '../../../kernels/model/mlpKernels';
import { BufferUsage } from '../../../kernels/pipeline';
import { PPO_ROW_WORDS } from '../../../kernels/loss/ppoLoss';
import { MISMATCH_WORDS } from '../../../kernels/stats/mismatchStats';
import { STATS_WORDS } from '../../../kernels/stats/stats';
import { TRAJ_STATS_WORDS } from '../../../kernels/stats/trajStats';
import { ESS_OUT_STRIDE } from '../../../kernels/optimizer/essScale';
import type { KernelVariant } from '../../../kernels/selectors';
import { rolloutLogprobsApart, type BatchTensors, type RunShape } from '../backend';
import { createKernels, backendKernels } from '../gpuKernels';
import { updateSteps, updateStepRefs, type StepRef } from './stage';

/** Every buffer of a GPU run that more than one stage, or the backend itself, reads or writes. */
export interface GpuBuffers {
  /** Model and optimizer state, [P] each; `grads` [P] and `norm` [1] of the current step. */
  params: GPUBuffer;
  ref: GPUBuffer;
  m: GPUBuffer;
  v: GPUBuffer;
  grads: GPUBuffer;
  norm: GPUBuffer;
  /** [1] u32 health bits (kernels/stats/finiteCheck.ts HEALTH), cleared at the start of each update. */
  health: GPUBuffer;
  /** [N * L] tokens; the row tables (workers/core/backend.ts makeRowTables) and the grammar [V * V]. */
  seq: GPUBuffer;
  trainRowPos: GPUBuffer;
  rolloutRowPos: GPUBuffer;
  grammar: GPUBuffer;
  /** Per-row activations [R * H], [R * V]: the training rows, or one sampling step's N rows. */
  h: GPUBuffer;
  z: GPUBuffer;
  dz: GPUBuffer;
  da: GPUBuffer;
  /** The [K, V, H] first-layer table the next forward reads, and the backward's slot sums. */
  proj: GPUBuffer;
  slotSums: GPUBuffer;
  /** [chunks, outputs] partial sums of headGrad and slotGrad, sized for the largest minibatch. */
  partials: GPUBuffer;
  /** Per-row scalars [R]. */
  logp: GPUBuffer;
  logpOld: GPUBuffer;
  logpRef: GPUBuffer;
  entropy: GPUBuffer;
  sumP2: GPUBuffer;
  /** The old policy's entropy and sum p^2 (EDGE-GRPO, OTB, VCPO). */
  entropyOld: GPUBuffer;
  sumP2Old: GPUBuffer;
  /** What the reference and rollout passes write besides their log-probs (nobody reads it; OTB's W by position borrows the entropy). */
  scratchEntropy: GPUBuffer;
  scratchSumP2: GPUBuffer;
  /** The rollout policy's log-probs (logpOld itself when rollouts are fresh). */
  logpRollout: GPUBuffer;
  adv: GPUBuffer;
  dlogp: GPUBuffer;
  /** [R * PPO_ROW_WORDS] the loss's rows (loss, ratio, clip, kl). */
  ppo: GPUBuffer;
  mask: GPUBuffer;
  /** The collected mask, which the mismatch statistics read: mask itself unless a rollout correction rewrites that. */
  sampledMask: GPUBuffer;
  /** [R] aggregation weights, then, with a rollout correction's IS level, [R] IS weights (the loss reads both). */
  weights: GPUBuffer;
  /** SeeUPO: one set of aggregation weights per turn stage (each with its IS half, as weights). */
  stageWeights: GPUBuffer[];
  /** Advantage inputs: per trajectory, per turn, per role. */
  trajIn: GPUBuffer;
  turnIn: GPUBuffer;
  roleRewards: GPUBuffer;
  /** [N * TRAJ_STATS_WORDS] per-trajectory statistics. */
  trajStats: GPUBuffer;
  /**
   * (ESS, lr factor) pairs, ESS_OUT_STRIDE words apart (a binding offset's alignment): one per
   * minibatch at the update's start, then, with VCPO's ESS-scaled lr, one per optimizer step.
   */
  essOut: GPUBuffer;
  /** [N * segments] sequence log-ratios (seqRatio). */
  seqLog: GPUBuffer;
  statsOut: GPUBuffer;
  negOutOut: GPUBuffer;
  mismatchOut: GPUBuffer;
  /** PPO: the critic table, each row's state and the GAE returns ([1] without a critic). */
  criticTable: GPUBuffer;
  stateKey: GPUBuffer;
  returns: GPUBuffer;
  /** Stale rollouts: the parameters rollouts read (params itself when fresh). */
  rollParams: GPUBuffer;
  /** IGPO: the teacher-forced answer contexts, their answer rows and the answer log-probs. */
  score: { seq: GPUBuffer; rows: GPUBuffer; logp: GPUBuffer } | null;
}

export type BackendKernels = ReturnType<typeof createKernels<ReturnType<typeof backendKernels>>>;
type EmbedProjectCall = ReturnType<BackendKernels['embedProject']['bind']>;

export interface GpuUpdate {
  readonly device: GPUDevice;
  readonly shape: RunShape;
  readonly variant: KernelVariant;
  readonly k: BackendKernels;
  readonly b: GpuBuffers;
  /** The update's optimizer steps, in order. */
  readonly steps: readonly StepRef[];
  /** Slot i of essOut as a binding (minibatch i, or MB + s for step s). */
  essAt(i: number): GPUBufferBinding;
  /** The first-layer table of each parameter set a forward reads (the rollout policy is params when fresh). */
  readonly project: { params: EmbedProjectCall; ref: EmbedProjectCall; rollout: EmbedProjectCall };
  /** A buffer of this run for a stage's own use, destroyed with the backend. */
  f32(name: string, words: number): GPUBuffer;
  /** A map-readable buffer of this run (a host stage's readback), destroyed with the backend. */
  mapRead(name: string, words: number): GPUBuffer;
  /** What a host stage computed of the last update for the batch dump (the rollout correction's weights and keeps). */
  readonly host: { corrected: Required<Pick<BatchTensors, 'isWeight' | 'rsKeep'>> | null };
}

/** ESS slots: one per minibatch, and one per optimizer step with VCPO's per-step lr. */
export const essSlots = (shape: RunShape): number => shape.minibatches.length + (shape.essLr.enabled ? updateSteps(shape) : 0);

/**
 * Makes every shared buffer of a run (after checking the largest against the device's limits),
 * its kernels and the embedProject calls; `owned` collects every buffer for destroy().
 */
export function createGpuUpdate(
  device: GPUDevice,
  shape: RunShape,
  initialParams: Float32Array,
  variant: KernelVariant,
  label: string,
  owned: GPUBuffer[],
): GpuUpdate {
  checkBufferLimits(device, shape);
  const { dims } = shape;
  const S = BufferUsage.STORAGE | BufferUsage.COPY_SRC | BufferUsage.COPY_DST;
  const f32 = (name: string, words: number): GPUBuffer => {
    const b = device.createBuffer({ label: `${name} (${label})`, size: Math.max(16, Math.ceil(words) * 4), usage: S });
    owned.push(b);
    return b;
  };
  const b = createBuffers(device, shape, initialParams, f32);
  // Kernels: pipelines come from the per-device cache (compiled ahead by openGpuBackend, else at
  // their first bind); each bind() is one configuration.
  const k = createKernels(device, backendKernels(shape, variant));
  const project = (p: GPUBuffer, what: string) => k.embedProject.bind({ params: p, proj: b.proj }, { dims }, `embedProject ${what}`);
  const projParams = project(b.params, 'params');
  return {
    device,
    shape,
    variant,
    k,
    b,
    steps: updateStepRefs(shape),
    essAt: (i) => ({ buffer: b.essOut, offset: 4 * ESS_OUT_STRIDE * i, size: 8 }),
    project: { params: projParams, ref: project(b.ref, 'ref'), rollout: shape.staleness > 0 ? project(b.rollParams, 'rollout policy') : projParams },
    f32,
    mapRead(name, words) {
      const buf = device.createBuffer({ label: `${name} (${label})`, size: Math.max(16, 4 * Math.ceil(words)), usage: BufferUsage.MAP_READ | BufferUsage.COPY_DST });
      owned.push(buf);
      return buf;
    },
    host: { corrected: null },
  };
}

/** Scratch of the backward reductions (kernels/reduce.ts), shared by the two, sized for the largest minibatch. */
const backwardScratch = (shape: RunShape): number =>
  backwardScratchWords(shape.dims, shape.L, shape.minibatches.map(([n0, n1]) => (n1 - n0) * shape.Tp));

/**
 * The largest buffers (per-row activations, the [K, V, H] first-layer tables, the scratch) against
 * the device's limits: says which limit a too-large batch hits instead of a validation error.
 */
function checkBufferLimits(device: GPUDevice, shape: RunShape): void {
  const { dims, N, Tp } = shape;
  const largest = Math.max(4 * N * Tp * Math.max(dims.V, dims.H, 4), 4 * slotTableWords(dims), 4 * backwardScratch(shape));
  const limit = Math.min(device.limits.maxStorageBufferBindingSize, device.limits.maxBufferSize);
  if (largest > limit) {
    throw new Error(
      `gpu backend: a ${N} x ${Tp}-row batch needs ${(largest / 2 ** 20).toFixed(0)} MiB buffers, over this device's ` +
        `${(limit / 2 ** 20).toFixed(0)} MiB storage-buffer limit; use fewer prompts, a smaller group or fewer turns`,
    );
  }
}

/** The shared buffers of a run of `shape` (GpuBuffers), the parameters and row tables uploaded. */
function createBuffers(device: GPUDevice, shape: RunShape, initialParams: Float32Array, f32: (name: string, words: number) => GPUBuffer): GpuBuffers {
  const { dims, N, L, Tp } = shape;
  const { V, H } = dims;
  const P = paramLayout(dims).size;
  const R = N * Tp;
  const T = shape.maxTurns;
  const upload = (name: string, data: Float32Array | Uint32Array): GPUBuffer => {
    const b = f32(name, data.length);
    device.queue.writeBuffer(b, 0, data);
    return b;
  };
  const rolloutAll = new Uint32Array(shape.rolloutRowPos.length * N);
  shape.rolloutRowPos.forEach((rp, s) => rolloutAll.set(rp, s * N));
  const stale = shape.staleness > 0;
  const logpOld = f32('logpOld', R);
  const M = shape.scoreContexts;
  const scoreRows = M * shape.scoreSpan;
  const params = upload('params', initialParams);
  const mask = f32('mask', R);
  // A rollout correction's IS weights follow the aggregation weights in the same buffer.
  const weightWords = R * (shape.correction?.rolloutIs ? 2 : 1);
  return {
    params,
    ref: upload('ref params', initialParams),
    m: f32('adam m', P),
    v: f32('adam v', P),
    grads: f32('grads', P),
    norm: f32('grad norm', 1),
    health: f32('health', 1),
    seq: f32('seq', N * L),
    trainRowPos: upload('train rowPos', shape.trainRowPos),
    rolloutRowPos: upload('rollout rowPos', rolloutAll),
    grammar: upload('grammar', Uint32Array.from(shape.grammar)),
    h: f32('h', R * H),
    z: f32('z', R * V),
    dz: f32('dz', R * V),
    da: f32('da', R * H),
    proj: f32('proj', slotTableWords(dims)),
    slotSums: f32('slot sums G', slotTableWords(dims)),
    partials: f32('backward partials', backwardScratch(shape)),
    logp: f32('logp', R),
    logpOld,
    logpRef: f32('logpRef', R),
    entropy: f32('entropy', R),
    sumP2: f32('sumP2', R),
    entropyOld: f32('entropy (old)', R),
    sumP2Old: f32('sumP2 (old)', R),
    scratchEntropy: f32('entropy (ref/rollout, unused)', R),
    scratchSumP2: f32('sumP2 (ref/rollout, unused)', R),
    logpRollout: rolloutLogprobsApart(shape) ? f32('logpRollout', R) : logpOld,
    adv: f32('adv', R),
    dlogp: f32('dlogp', R),
    ppo: f32('ppo rows', R * PPO_ROW_WORDS),
    mask,
    sampledMask: shape.correction ? f32('mask (as collected)', R) : mask,
    weights: f32('weights', weightWords),
    stageWeights: shape.loss.ratio.mode === 'turn' ? Array.from({ length: T }, (_, k) => f32(`weights turn ${k}`, weightWords)) : [],
    trajIn: f32('trajIn', 4 * N),
    turnIn: f32('turnIn', 4 * N * T),
    roleRewards: f32('roleRewards', N * shape.nRoles),
    trajStats: f32('trajStats', TRAJ_STATS_WORDS * N),
    essOut: f32('ess and lr factor per minibatch and step', ESS_OUT_STRIDE * essSlots(shape)),
    seqLog: f32('seqLog', N * (shape.loss.ratio.mode === 'turn' || shape.loss.ratio.mode === 'step' ? T : 1)),
    statsOut: f32('stats', STATS_WORDS),
    negOutOut: f32('neg_out_grad_share', 1),
    mismatchOut: f32('mismatch', MISMATCH_WORDS),
    criticTable: f32('critic table', shape.critic?.size ?? 0),
    stateKey: f32('state keys', shape.critic ? R : 1),
    returns: f32('returns', shape.critic ? R : 1),
    rollParams: stale ? upload('rollout params', initialParams) : params,
    score: M ? { seq: f32('score seq', M * L), rows: f32('score rows', scoreRows), logp: f32('score logp', scoreRows) } : null,
  };
}
