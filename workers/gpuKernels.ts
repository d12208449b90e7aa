/**
 * Which kernels a GPU backend of a given shape binds, and the pipelines they compile. The backend
 * creates its kernels from backendKernels; openGpuBackend first compiles backendPipelines side by
 * side (kernels/pipeline.ts compileKernels), so a run compiles what it binds and nothing else. Until
 * 2026-12-01 every kernel of kernels/all.ts (42 pipelines, the candidates no backend runs among them)
 * was compiled when a device was picked, and the specialized ones again when the backend bound them.
 * tests/gpu/backendPipelines.gpu.test.ts checks the list both ways over shapes and variants: the
 * backend compiles nothing past it, and binds every pipeline on it.
 */
import { optimizerStepKernel } from '../kernels/optimizer/adam';
import { advantageGroupSizeFor, advantageKernel, type AdvantageConfig } from '../kernels/advantage/advantage';
import { criticUpdateKernel, gaeKernel } from '../kernels/advantage/critic';
import { essScaleKernel } from '../kernels/optimizer/essScale';
import { finiteCheckKernel } from '../kernels/stats/finiteCheck';
import { infoGainKernel } from '../kernels/advantage/infoGain';
import { embedProjectKernel, firstLayerGradKernels, forwardKernel, headGradKernel, hiddenGradKernel, slotGradKernel } from '../kernels/model/mlpKernels';
import { logitGradKernels } from '../kernels/softmax/logitGrad';
import type { KernelPipeline } from '../kernels/pipeline';
import { ppoLossKernel } from '../kernels/loss/ppoLoss';
import { sampleKernels } from '../kernels/softmax/sample';
import { seqRatioKernel } from '../kernels/loss/seqRatio';
import { statsHistCopiesFor, statsKernel, statsSpreadBinsFor, type StatsConfig } from '../kernels/stats/stats';
import { tokenBaselineKernel } from '../kernels/advantage/tokenBaseline';
import { tokenStatsKernels } from '../kernels/softmax/tokenStats';
import { trajStatsKernel } from '../kernels/stats/trajStats';
import { softmaxRowLayout, type KernelVariant } from '../kernels/variant';
import { whitenKernel } from '../kernels/advantage/whiten';
import type { RunShape } from './backend';

/** Optimizer steps per update: epochs x minibatches, times the turns for SeeUPO's per-turn stages. */
export function updateSteps(shape: RunShape): number {
  return shape.epochs * shape.minibatches.length * (shape.loss.ratioMode === 'turn' ? shape.maxTurns : 1);
}

/** The kernels a backend of `shape` runs in `variant`, by the names the backend gives them. */
export function backendKernels(shape: RunShape, variant: KernelVariant) {
  const { V } = shape.dims;
  return {
    embedProject: embedProjectKernel,
    forward: forwardKernel,
    sample: sampleKernels[softmaxRowLayout(variant, V)],
    tokenStats: tokenStatsKernels[softmaxRowLayout(variant, V)],
    trajStats: trajStatsKernel,
    advantage: advantageKernel,
    tokenBaseline: tokenBaselineKernel,
    whiten: whitenKernel,
    essScale: essScaleKernel,
    seqRatio: seqRatioKernel,
    infoGain: infoGainKernel,
    gae: gaeKernel,
    criticUpdate: criticUpdateKernel,
    ppoLoss: ppoLossKernel,
    logitGrad: logitGradKernels[variant],
    headGrad: headGradKernel,
    hiddenGrad: hiddenGradKernel,
    slotGrad: slotGradKernel,
    firstLayerGrad: firstLayerGradKernels[variant],
    optimizerStep: optimizerStepKernel,
    stats: statsKernel,
    finiteCheck: finiteCheckKernel,
  };
}

export function advantageConfigFor(shape: RunShape, variant: KernelVariant): AdvantageConfig {
  return {
    numTraj: shape.N, tp: shape.Tp, maxTurns: shape.maxTurns, actionLen: shape.actionLen, nRoles: shape.nRoles,
    ...shape.adv, groupSize: advantageGroupSizeFor(variant, shape.group),
  };
}

export function statsConfigFor(shape: RunShape, variant: KernelVariant): StatsConfig {
  return {
    numTraj: shape.N, tp: shape.Tp, minibatches: shape.minibatches.length,
    spreadBins: statsSpreadBinsFor(variant), histCopies: statsHistCopiesFor(variant),
  };
}

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
    ...k.advantage.pipelines(advantageConfigFor(shape, variant)),
    ...(runsTokenBaseline(shape) ? k.tokenBaseline.pipelines() : []),
    ...(shape.whiten ? k.whiten.pipelines() : []),
    ...k.essScale.pipelines(),
    ...(shape.scoreContexts > 0 ? k.infoGain.pipelines() : []),
    ...(shape.critic ? [...k.gae.pipelines({ numTraj: N, tp: Tp, gamma: shape.critic.gamma, lambda: shape.critic.lambda }), ...k.criticUpdate.pipelines()] : []),
    ...(updates && shape.loss.ratioMode !== 'token' ? k.seqRatio.pipelines() : []),
    ...(updates
      ? [
          ...k.ppoLoss.pipelines(),
          ...k.logitGrad.pipelines({ numRows: R, vocab: V, temperature: shape.temperature }),
          ...k.headGrad.pipelines(),
          ...k.hiddenGrad.pipelines(),
          ...k.slotGrad.pipelines(),
        ]
      : []),
    ...k.firstLayerGrad.pipelines(),
    ...(updateSteps(shape) > 0 ? k.optimizerStep.pipelines() : []),
    ...k.stats.pipelines(statsConfigFor(shape, variant)),
    ...k.finiteCheck.pipelines(),
  ];
}

type Created<T> = { [K in keyof T]: T[K] extends { create(device: GPUDevice): infer R } ? R : never };

/** Each kernel's instance on `device`, by the same names. */
export function createKernels<T extends Record<string, { create(device: GPUDevice): unknown }>>(device: GPUDevice, defs: T): Created<T> {
  return Object.fromEntries(Object.entries(defs).map(([name, d]) => [name, d.create(device)])) as Created<T>;
}
