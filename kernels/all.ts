/**
 * Every WGSL kernel, for up-front compilation and checks (workers/gpuDevice.ts) and for tests
 * (ALL_KERNELS: one entry per pipeline), and every operation the backend dispatches as one step,
 * for the kernel benchmark (ALL_OPS: the two-pass reductions of kernels/reduce.ts count as one).
 */
import { adamKernel, gradNormKernel } from './adam';
import { advantageKernel } from './advantage';
import { criticUpdateKernel, gaeKernel } from './critic';
import { essScaleKernel } from './essScale';
import { finiteCheckKernel } from './finiteCheck';
import { infoGainKernel } from './infoGain';
import {
  embedGradKernel,
  embedGradPartialKernel,
  forwardKernel,
  headGradKernel,
  headGradPartialKernel,
  hiddenGradKernel,
  inputGradKernel,
  inputGradPartialKernel,
  logitGradKernel,
} from './mlp';
import { ppoLossKernel } from './ppoLoss';
import { chunkSumKernel } from './reduce';
import { seqRatioKernel } from './seqRatio';
import { sampleKernel } from './sample';
import { statsKernel } from './stats';
import { tokenBaselineKernel } from './tokenBaseline';
import { tokenStatsKernel } from './tokenStats';
import { trajStatsKernel } from './trajStats';
import { whitenKernel } from './whiten';

export const ALL_KERNELS = [
  forwardKernel,
  sampleKernel,
  tokenStatsKernel,
  infoGainKernel,
  trajStatsKernel,
  advantageKernel,
  gaeKernel,
  criticUpdateKernel,
  tokenBaselineKernel,
  whitenKernel,
  essScaleKernel,
  seqRatioKernel,
  ppoLossKernel,
  logitGradKernel,
  headGradPartialKernel,
  hiddenGradKernel,
  inputGradPartialKernel,
  embedGradPartialKernel,
  chunkSumKernel,
  gradNormKernel,
  adamKernel,
  statsKernel,
  finiteCheckKernel,
] as const;

export const ALL_OPS = [
  forwardKernel,
  sampleKernel,
  tokenStatsKernel,
  infoGainKernel,
  trajStatsKernel,
  advantageKernel,
  gaeKernel,
  criticUpdateKernel,
  tokenBaselineKernel,
  whitenKernel,
  essScaleKernel,
  seqRatioKernel,
  ppoLossKernel,
  logitGradKernel,
  headGradKernel,
  hiddenGradKernel,
  inputGradKernel,
  embedGradKernel,
  gradNormKernel,
  adamKernel,
  statsKernel,
  finiteCheckKernel,
] as const;
