/**
 * The update, as one table of stages in the order they run (docs/ARCHITECTURE.md "One training
 * iteration", step 6, and "Add a mechanism"). The GPU backend binds each enabled stage's kernels
 * once and encodes them into one compute pass per update; the CPU backend runs each stage's
 * reference; the batch lab runs the log-prob, reward, advantage, ratio and loss stages on a frozen
 * batch; the pipelines a run compiles and the dispatches an update records are sums over it.
 */
import type { KernelPipeline } from '../../../kernels/pipeline';
import type { KernelVariant } from '../../../kernels/selectors';
import type { RunShape, UpdateInput } from '../backend';
import { backendKernels } from '../gpuKernels';
import { advantage, criticAdvantage, essScale, sftAdvantage, tokenBaseline, trajGradNorm, trajStats, whiten } from './advantageStages';
import { finiteCheck, mismatchStats, negOutShare, stats } from './finishStages';
import { rolloutCorrection } from './correctionStages';
import { answerScores, oldLogprobs, refLogprobs, rolloutLogprobs } from './logprobStages';
import { updateStepRefs, type KernelDefs, type StepRef, type UpdateStage } from './stage';
import { backward, loss, optimizer, seqRatio, stepEss, stepForward, stepTokenStats } from './stepStages';

export const UPDATE_STAGES: readonly UpdateStage[] = [
  // Before the optimizer steps: log-probs (IGPO's answer scoring first), then the advantage.
  answerScores,
  refLogprobs,
  rolloutLogprobs,
  oldLogprobs,
  // The rollout correction's weights and rejection, before anything reads the mask.
  rolloutCorrection,
  trajStats,
  trajGradNorm,
  sftAdvantage,
  criticAdvantage,
  tokenBaseline,
  advantage,
  whiten,
  essScale,
  // Every optimizer step.
  stepForward,
  stepTokenStats,
  stepEss,
  seqRatio,
  loss,
  backward,
  optimizer,
  // After the last step.
  stats,
  negOutShare,
  mismatchStats,
  finiteCheck,
];

/** The stages a run of `shape` has, in order. */
export function stagesOf(shape: RunShape): UpdateStage[] {
  return UPDATE_STAGES.filter((s) => s.enabled(shape));
}

/**
 * Walks one update over `stages` (a run's, in table order): the prepare stages, every optimizer
 * step's stages, then the finish stages, skipping those this update does not run.
 */
export function walkUpdate(
  stages: readonly UpdateStage[],
  steps: readonly StepRef[],
  inp: Pick<UpdateInput, 'raw'>,
  visit: (index: number, step: StepRef | null) => void,
): void {
  const runs = stages.map((s) => s.runs?.(inp) ?? true);
  const phase = (p: UpdateStage['phase'], step: StepRef | null) => stages.forEach((s, i) => s.phase === p && runs[i] && visit(i, step));
  phase('prepare', null);
  for (const step of steps) phase('step', step);
  phase('finish', null);
}

/** A run of stages walkUpdate visits together: the prepare phase, one optimizer step, or the finish phase. */
export interface UpdateBlock {
  phase: UpdateStage['phase'];
  step: StepRef | null;
  /** Indices into the walked stages, in order. */
  stages: number[];
}

/**
 * walkUpdate's visits cut at its phase and step boundaries, in the same order: step-through
 * (UpdateInput.capture) hands the batch over after the prepare block and after each step's.
 */
export function updateBlocks(stages: readonly UpdateStage[], steps: readonly StepRef[], inp: Pick<UpdateInput, 'raw'>): UpdateBlock[] {
  const blocks: UpdateBlock[] = [];
  walkUpdate(stages, steps, inp, (i, step) => {
    const last = blocks[blocks.length - 1];
    const phase = stages[i]!.phase;
    if (last && last.phase === phase && last.step === step) last.stages.push(i);
    else blocks.push({ phase, step, stages: [i] });
  });
  return blocks;
}

const dispatchesOf = (k: KernelDefs[keyof KernelDefs]): number => ('dispatches' in k ? k.dispatches : 1);

/**
 * The dispatches one sampleTurn and one update() record (for tests and benchmarks): a turn is the
 * rollout policy's embedProject, then a (forward, sample) pair per action slot; an update is every
 * stage's kernels as often as it runs them, for an update that is not ReGFT's fine-tuning.
 */
export function dispatchCounts(shape: RunShape, variant: KernelVariant = 'thread'): { sampleTurn: number; update: number } {
  const k = backendKernels(shape, variant);
  const stages = stagesOf(shape);
  let update = 0;
  walkUpdate(stages, updateStepRefs(shape), { raw: false }, (i, step) => {
    const s = stages[i]!;
    update += (s.repeats?.(shape, step) ?? 1) * s.kernels.reduce((n, name) => n + dispatchesOf(k[name]), 0);
  });
  return { sampleTurn: dispatchesOf(k.embedProject) + (dispatchesOf(k.forward) + dispatchesOf(k.sample)) * shape.actionLen, update };
}

/**
 * Every pipeline a GPU backend of `shape` binds in `variant`, with the override constants of its
 * configurations: the rollout's, then each enabled stage's. openGpuBackend compiles them side by
 * side before binding anything; tests/gpu/backendPipelines.gpu.test.ts checks the list both ways.
 */
export function backendPipelines(shape: RunShape, variant: KernelVariant): KernelPipeline[] {
  const k = backendKernels(shape, variant);
  return [
    ...k.embedProject.pipelines(),
    ...k.forward.pipelines(),
    ...k.sample.pipelines({ vocab: shape.dims.V, numRows: shape.N, seed: shape.seed, iter: 0 }),
    ...stagesOf(shape).flatMap((s) => s.pipelines(k, shape, variant)),
  ];
}
