/** Every WGSL kernel, for up-front compilation and checks (workers/gpuDevice.ts) and for tests. */
import { adamKernel, gradNormKernel } from './adam';
import { advantageKernel } from './advantage';
import { finiteCheckKernel } from './finiteCheck';
import {
  embedGradKernel,
  forwardKernel,
  headGradKernel,
  hiddenGradKernel,
  inputGradKernel,
  logitGradKernel,
} from './mlp';
import { ppoLossKernel } from './ppoLoss';
import { sampleKernel } from './sample';
import { statsKernel } from './stats';
import { tokenStatsKernel } from './tokenStats';

export const ALL_KERNELS = [
  forwardKernel,
  sampleKernel,
  tokenStatsKernel,
  advantageKernel,
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
