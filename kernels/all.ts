/** Every WGSL kernel, for up-front compilation and checks (workers/gpuDevice.ts) and for tests. */
import { adamKernel, gradNormKernel } from './adam';
import { advantageKernel } from './advantage';
import { essScaleKernel } from './essScale';
import { finiteCheckKernel } from './finiteCheck';
import { infoGainKernel } from './infoGain';
import {
  embedGradKernel,
  forwardKernel,
  headGradKernel,
  hiddenGradKernel,
  inputGradKernel,
  logitGradKernel,
} from './mlp';
import { ppoLossKernel } from './ppoLoss';
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
