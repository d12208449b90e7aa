/**
 * Every WGSL kernel, for compilation checks (tests/gpu/compile.gpu.test.ts) and the self-test
 * (ALL_KERNELS: one entry per pipeline), and every operation the backend dispatches as one step,
 * for the kernel benchmark (ALL_OPS: the two-pass reductions of kernels/reduce.ts count as one).
 * The subgroup variants (kernels/selectors.ts) are listed after their thread versions; they compile
 * only on a device with the `subgroups` feature.
 */
import { adamKernel, gradNormKernel, optimizerStepKernel } from './optimizer/adam';
import { advantageKernel } from './advantage/advantage';
import { criticUpdateKernel, gaeKernel } from './advantage/critic';
import { essScaleKernel } from './optimizer/essScale';
import { finiteCheckKernel } from './stats/finiteCheck';
import { mismatchStatsKernel } from './stats/mismatchStats';
import { negOutShareKernel } from './stats/negOutShare';
import { infoGainKernel } from './advantage/infoGain';
import { embedProjectKernel, firstLayerGradKernel, firstLayerGradSubgroupKernel, forwardKernel, headGradKernel, hiddenGradKernel, slotGradKernel } from './model/mlpKernels';
import { logitGradKernel, logitGradSubgroupKernel } from './softmax/logitGrad';
import { ppoLossKernel } from './loss/ppoLoss';
import { seqRatioKernel } from './loss/seqRatio';
import { sampleKernel, sampleSubgroupKernel, sampleUnrolledKernel } from './softmax/sample';
import { statsKernel } from './stats/stats';
import { tokenBaselineKernel } from './advantage/tokenBaseline';
import { tokenStatsKernel, tokenStatsSubgroupKernel, tokenStatsUnrolledKernel } from './softmax/tokenStats';
import { trajStatsKernel } from './stats/trajStats';
import { trajGradNormKernel } from './model/trajGradNorm';
import { whitenKernel } from './advantage/whiten';
import type { DefinedKernel } from './pipeline';

export const ALL_OPS = [
  embedProjectKernel,
  forwardKernel,
  sampleKernel,
  sampleSubgroupKernel,
  sampleUnrolledKernel,
  tokenStatsKernel,
  tokenStatsSubgroupKernel,
  tokenStatsUnrolledKernel,
  infoGainKernel,
  trajStatsKernel,
  trajGradNormKernel,
  advantageKernel,
  gaeKernel,
  criticUpdateKernel,
  tokenBaselineKernel,
  whitenKernel,
  essScaleKernel,
  seqRatioKernel,
  ppoLossKernel,
  logitGradKernel,
  logitGradSubgroupKernel,
  headGradKernel,
  hiddenGradKernel,
  slotGradKernel,
  firstLayerGradKernel,
  firstLayerGradSubgroupKernel,
  gradNormKernel,
  adamKernel,
  optimizerStepKernel,
  statsKernel,
  finiteCheckKernel,
  negOutShareKernel,
  mismatchStatsKernel,
] as const;

/** What a compilation check or the self-test needs of a pipeline. */
export type Pipeline = Pick<DefinedKernel<unknown, unknown>, 'label' | 'source' | 'workgroupSize' | 'uniform' | 'requires' | 'entryPoint' | 'file'>;
const pipelines = (op: (typeof ALL_OPS)[number]): Pipeline[] => ('kernels' in op ? [...op.kernels] : [op]);
/** One entry per pipeline: both passes of each two-pass op (gradNormSum, statsCombine), chunkSum once. */
export const ALL_KERNELS: readonly Pipeline[] = [...new Map(ALL_OPS.flatMap(pipelines).map((k) => [k.label, k])).values()];
