/**
 * Which kernels a GPU backend of a given shape binds, and the pipelines they compile. The backend
 * creates its kernels from backendKernels (the selector table of kernels/selectors.ts); openGpuBackend
 * first compiles backendPipelines side by side (kernels/pipeline.ts compileKernels), so a run
 * compiles what it binds and nothing else. tests/gpu/backendPipelines.gpu.test.ts checks the list both ways over shapes and variants: the
 * backend compiles nothing past it, and binds every pipeline on it.
 */
import { usesSeqRatio } from './plan';
import type { AdvantageConfig } from '../../kernels/advantage/advantage';
import type { KernelPipeline } from '../../kernels/pipeline';
import { CONFIG_SELECTORS, selectKernels, type KernelVariant, type SelectorShape } from '../../kernels/selectors';
import type { StatsConfig } from '../../kernels/stats/stats';
import type { RunShape } from './backend';

/** Optimizer steps per update: epochs x minibatches, times the turns for SeeUPO's per-turn stages. */
export function updateSteps(shape: RunShape): number {
  return shape.epochs * shape.minibatches.length * (shape.loss.ratioMode === 'turn' ? shape.maxTurns : 1);
}

/** What the selector table reads of a run's shape. */
const selectorShape = (shape: RunShape): SelectorShape => ({ vocab: shape.dims.V, group: shape.group });

/** The kernels a backend of `shape` runs in `variant`, by the names the backend gives them. */
export function backendKernels(shape: RunShape, variant: KernelVariant) {
  return selectKernels(variant, selectorShape(shape));
}

export function advantageConfigFor(shape: RunShape, variant: KernelVariant): AdvantageConfig {
  return {
    numTraj: shape.N, tp: shape.Tp, maxTurns: shape.maxTurns, actionLen: shape.actionLen, nRoles: shape.nRoles,
    ...shape.adv, groupSize: CONFIG_SELECTORS.advantageGroupSize.pick(variant, selectorShape(shape)),
  };
}

export function statsConfigFor(shape: RunShape, variant: KernelVariant): StatsConfig {
  const s = selectorShape(shape);
  return {
    numTraj: shape.N, tp: shape.Tp, minibatches: shape.minibatches.length,
    spreadBins: CONFIG_SELECTORS.statsSpreadBins.pick(variant, s), histCopies: CONFIG_SELECTORS.statsHistCopies.pick(variant, s),
  };
}

/** gradNorm's block in the optimizer step's configuration. */
export const gradNormBlockFor = (shape: RunShape, variant: KernelVariant): number => CONFIG_SELECTORS.gradNormBlock.pick(variant, selectorShape(shape));

/** Whether the update runs OTB's token baseline (PPO's critic takes its place when there is one). */
export const runsTokenBaseline = (shape: RunShape): boolean => !shape.critic && shape.adv.otb;

/**
 * Every pipeline a backend of `shape` binds in `variant`, with the override constants of its
 * configurations (the vocabulary, the rows per trajectory, the group size, stats' histogram copies).
 */
export function backendPipelines(shape: RunShape, variant: KernelVariant): KernelPipeline[] {
  const k = backendKernels(shape, variant);
  const { N, Tp } = shape;
  const V = shape.dims.V;
  const R = N * Tp;
  const updates = shape.minibatches.length > 0;
  return [
    ...k.embedProject.pipelines(),
    ...k.forward.pipelines(),
    ...k.sample.pipelines({ vocab: V, numRows: N, seed: shape.seed, iter: 0 }),
    ...k.tokenStats.pipelines({ vocab: V, numRows: R }),
    ...k.trajStats.pipelines(),
    ...(shape.adv.trueGradNorm ? k.trajGradNorm.pipelines() : []),
    ...k.advantage.pipelines(advantageConfigFor(shape, variant)),
    ...(runsTokenBaseline(shape) ? k.tokenBaseline.pipelines() : []),
    ...(shape.whiten ? k.whiten.pipelines() : []),
    ...k.essScale.pipelines(),
    ...(shape.scoreContexts > 0 ? k.infoGain.pipelines() : []),
    ...(shape.critic ? [...k.gae.pipelines({ numTraj: N, tp: Tp, gamma: shape.critic.gamma, lambda: shape.critic.lambda }), ...k.criticUpdate.pipelines()] : []),
    ...(updates && usesSeqRatio(shape.loss.ratioMode) ? k.seqRatio.pipelines() : []),
    ...(updates ? [...k.ppoLoss.pipelines(), ...k.headGrad.pipelines(), ...k.slotGrad.pipelines()] : []),
    // VCPO's per-trajectory gradient norm runs logitGrad and hiddenGrad on the score too.
    ...(updates || shape.adv.trueGradNorm
      ? [...k.logitGrad.pipelines({ numRows: R, vocab: V, temperature: shape.temperature }), ...k.hiddenGrad.pipelines()]
      : []),
    ...k.firstLayerGrad.pipelines(),
    ...(updateSteps(shape) > 0 ? k.optimizerStep.pipelines() : []),
    ...k.stats.pipelines(statsConfigFor(shape, variant)),
    ...k.finiteCheck.pipelines(),
    ...k.negOutShare.pipelines(),
  ];
}

type Created<T> = { [K in keyof T]: T[K] extends { create(device: GPUDevice): infer R } ? R : never };

/** Each kernel's instance on `device`, by the same names. */
export function createKernels<T extends Record<string, { create(device: GPUDevice): unknown }>>(device: GPUDevice, defs: T): Created<T> {
  return Object.fromEntries(Object.entries(defs).map(([name, d]) => [name, d.create(device)])) as Created<T>;
}
