/**
 * One stage of the update (docs/ARCHITECTURE.md "One training iteration", step 6): what it reads
 * and writes, the kernels it dispatches on the GPU, the reference it runs on the CPU, and when a
 * run has it. The table of stages (workers/core/update/stages.ts) is the update: the GPU and CPU
 * backends, the list of pipelines a run compiles, the dispatch count and the batch lab all walk it
 * in order, so a stage is declared once.
 */
import type { KernelPipeline } from '../../../kernels/pipeline';
import type { KernelVariant, selectKernels } from '../../../kernels/selectors';
import type { RunShape, UpdateInput } from '../backend';
import type { CpuUpdate } from './cpuUpdate';
import type { GpuUpdate } from './gpuUpdate';

/**
 * Where a stage runs: once before the optimizer steps, in every optimizer step (epochs x SeeUPO's
 * turn stages x minibatches), or once after them.
 */
export type Phase = 'prepare' | 'step' | 'finish';

/**
 * What a stage computes. The batch lab re-scores a frozen batch with the log-prob, reward,
 * advantage, ratio and loss stages; it takes no gradient and no optimizer step.
 */
export type StagePart = 'logprobs' | 'correction' | 'reward' | 'advantage' | 'ratio' | 'loss' | 'gradient' | 'optimizer' | 'statistics';

/** The kernels a backend selects for a run (kernels/selectors.ts), by the stage names of KERNEL_SELECTORS. */
export type KernelDefs = ReturnType<typeof selectKernels>;
export type KernelName = keyof KernelDefs;

/**
 * The tensors of an update, by the names both backends give them. Inputs come from the trainer
 * (the batch, its loss weights and advantage inputs) or the model state; stages write the rest.
 */
export const UPDATE_INPUTS = [
  'seq', 'params', 'ref', 'rolloutParams', 'mask', 'weights', 'stageWeights', 'mult', 'advInputs', 'answerContexts', 'stateKeys', 'critic', 'lr',
] as const;
export const UPDATE_TENSORS = [
  ...UPDATE_INPUTS,
  'h', 'z', 'logpRef', 'logpRollout', 'logpOld', 'entropyOld', 'sumP2Old', 'answerLogp', 'turnReward', 'trajStats', 'g2',
  'adv', 'values', 'returns', 'essMinibatch', 'logp', 'entropy', 'sumP2', 'essStep', 'seqLog', 'ratio', 'clip', 'kl', 'loss', 'dlogp',
  'grads', 'gradNorm', 'stats', 'negOutShare', 'mismatch', 'health',
] as const;
export type Tensor = (typeof UPDATE_TENSORS)[number];

/** One optimizer step of an update: its place in the loop and its minibatch's trajectories [n0, n1). */
export interface StepRef {
  /** 0, 1, ... in the order the steps run. */
  index: number;
  epoch: number;
  /** SeeUPO's turn stage (the last turn first); 0 in every other ratio mode. */
  turn: number;
  minibatch: number;
  n0: number;
  n1: number;
}

/** A stage's GPU side, bound once when the backend is made. */
export interface GpuStage {
  /** Rewrites the uniforms that change from update to update (before the update's one submit). */
  upload?(inp: UpdateInput, adamStep: number): void;
  /** Records its dispatches into the update's compute pass (`step`: null outside the step phase). */
  encode(pass: GPUComputePassEncoder, inp: UpdateInput, step: StepRef | null): void;
  /**
   * A stage whose work is the host's (the rollout correction): the backend submits what the update
   * encoded before it, with `copy`'s copies into `read`, waits for `read`, hands its bytes to
   * `apply` (which writes what the later stages read), and encodes the rest after it.
   */
  host?: { read: GPUBuffer; copy(enc: GPUCommandEncoder): void; apply(bytes: ArrayBuffer, inp: UpdateInput): void };
}

export interface UpdateStage {
  readonly name: string;
  readonly phase: Phase;
  readonly part: StagePart;
  /** What it reads and writes (checked for order over many run shapes by tests/unit/updateStages.test.ts). */
  readonly reads: readonly Tensor[];
  readonly writes: readonly Tensor[];
  /** The kernels it dispatches, in order, each as often as it dispatches it: its dispatch count. */
  readonly kernels: readonly KernelName[];
  /** Its CPU reference, as `file: function` (the oracle the GPU tests compare its kernels against). */
  readonly reference: string;
  /** Whether a run of this shape has the stage. */
  enabled(shape: RunShape): boolean;
  /** Whether an update runs it, where that depends on the update (ReGFT's fine-tuning updates); default yes. */
  runs?(inp: Pick<UpdateInput, 'raw'>): boolean;
  /** How many times it dispatches its kernels in one run of it (default 1; 0 skips). */
  repeats?(shape: RunShape, step: StepRef | null): number;
  /** The pipelines its binds compile (kernels/pipeline.ts compileKernels). */
  pipelines(k: KernelDefs, shape: RunShape, variant: KernelVariant): KernelPipeline[];
  gpu(g: GpuUpdate): GpuStage;
  cpu(c: CpuUpdate, inp: UpdateInput, step: StepRef | null): void;
}

/** Optimizer steps per update: epochs x minibatches, times the turns for SeeUPO's per-turn stages. */
export function updateSteps(shape: RunShape): number {
  return shape.epochs * shape.minibatches.length * turnStages(shape).length;
}

/** SeeUPO trains one turn per stage, the last turn first; every other ratio mode has one stage. */
export function turnStages(shape: RunShape): number[] {
  const T = shape.maxTurns;
  return shape.loss.ratio.mode === 'turn' ? Array.from({ length: T }, (_, k) => T - 1 - k) : [0];
}

/** Every optimizer step of an update, in the order they run: epoch, then turn stage, then minibatch. */
export function updateStepRefs(shape: RunShape): StepRef[] {
  const out: StepRef[] = [];
  for (let epoch = 0; epoch < shape.epochs; epoch++) {
    for (const turn of turnStages(shape)) {
      for (const [minibatch, [n0, n1]] of shape.minibatches.entries()) out.push({ index: out.length, epoch, turn, minibatch, n0, n1 });
    }
  }
  return out;
}
