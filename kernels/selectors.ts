/**
 * Which pipeline each stage of a GPU backend runs: one table from the adapter's capabilities (the
 * kernel variant) and the run's shape (vocabulary, group size) to the kernel of every stage and
 * the configuration choices that compile pipelines of their own. Each row names the measurement
 * its pick rests on: an H200 figure where one exists (BENCHMARKS.md and bench/results/h200*), else
 * what SwiftShader showed, or that the stage has one implementation. A new variant of a kernel
 * comes with a configuration that binds it (a row here) and a whole-iteration measurement on real
 * hardware. workers/core/gpuKernels.ts builds the backend's kernels from this table;
 * tests/unit/kernelSelectors.test.ts checks every option is bound by some shape and covered by the
 * self-test.
 */
import { criticUpdateKernel, gaeKernel } from './advantage/critic';
import { advantageKernel, ADVANTAGE_MAX_FIXED_GROUP } from './advantage/advantage';
import { infoGainKernel } from './advantage/infoGain';
import { tokenBaselineKernel } from './advantage/tokenBaseline';
import { whitenKernel } from './advantage/whiten';
import { ppoLossKernel } from './loss/ppoLoss';
import { seqRatioKernel } from './loss/seqRatio';
import {
  embedProjectKernel,
  firstLayerGradKernel,
  firstLayerGradSubgroupKernel,
  forwardKernel,
  headGradKernel,
  hiddenGradKernel,
  slotGradKernel,
} from './model/mlpKernels';
import { essScaleKernel } from './optimizer/essScale';
import { GRAD_NORM_BLOCK, GRAD_NORM_BLOCK_HARDWARE, optimizerStepKernel } from './optimizer/adam';
import { logitGradKernel, logitGradSubgroupKernel } from './softmax/logitGrad';
import { UNROLLED_MAX_VOCAB } from './softmax/rowUnrolled';
import { sampleKernel, sampleSubgroupKernel, sampleUnrolledKernel } from './softmax/sample';
import { tokenStatsKernel, tokenStatsSubgroupKernel, tokenStatsUnrolledKernel } from './softmax/tokenStats';
import { finiteCheckKernel } from './stats/finiteCheck';
import { mismatchStatsKernel } from './stats/mismatchStats';
import { negOutShareKernel } from './stats/negOutShare';
import { STATS_MAX_HIST_COPIES, statsKernel } from './stats/stats';
import { trajStatsKernel } from './stats/trajStats';
import { trajGradNormKernel } from './model/trajGradNorm';

/**
 * The adapter's kind of kernels: one thread per output ('thread'), or the hardware layouts
 * ('subgroup': subgroup reductions where a row or a sum is split over lanes, and the other
 * hardware choices of the table below). The subgroup kernels need a device created with the
 * `subgroups` feature and WGSL's `subgroup_id` builtins.
 */
export type KernelVariant = 'thread' | 'subgroup';

/** The layouts of the per-row softmax kernels: a variant's own, or unrolled (the vocabulary compiled in). */
export type RowLayout = KernelVariant | 'unrolled';

/**
 * The subgroup variant on a hardware adapter with subgroups; one thread per output elsewhere. On a
 * software adapter (SwiftShader: isFallbackAdapter) a "subgroup" is 4 lanes of one CPU core and
 * the subgroup kernels were 1-2x slower than the thread ones (bench/results/subgroup-rows-swiftshader.json);
 * a device that cannot say what its adapter is gets the thread variant too.
 */
export function defaultKernelVariant(device: GPUDevice): KernelVariant {
  const info = (device as GPUDevice & { adapterInfo?: GPUAdapterInfo & { isFallbackAdapter?: boolean } }).adapterInfo;
  const hardware = info !== undefined && info.isFallbackAdapter === false && info.architecture !== 'swiftshader';
  return hardware && device.features.has('subgroups') ? 'subgroup' : 'thread';
}

/**
 * Device features to request of `adapter`: `subgroups` where the adapter has it and the WGSL
 * implementation has the `subgroup_id` builtins the subgroup kernels use.
 */
export function subgroupFeatures(gpu: GPU, adapter: GPUAdapter): GPUFeatureName[] {
  return adapter.features.has('subgroups') && gpu.wgslLanguageFeatures?.has('subgroup_id') ? ['subgroups'] : [];
}

/** What of a run's shape the table reads. */
export interface SelectorShape {
  /** Vocabulary size. */
  vocab: number;
  /** Rollouts per prompt. */
  group: number;
}

/** One row: the options a stage has, the pick, and the measurement the pick rests on. */
export interface Selector<T> {
  /** Every option; each is the pick of some variant and shape. */
  readonly options: readonly T[];
  pick(variant: KernelVariant, shape: SelectorShape): T;
  readonly measured: string;
}

const only = <T>(kernel: T): Selector<T> => ({ options: [kernel], pick: () => kernel, measured: 'the only implementation' });
const byVariant = <T>(thread: T, subgroup: T, measured: string): Selector<T> => ({
  options: [thread, subgroup],
  pick: (variant) => (variant === 'subgroup' ? subgroup : thread),
  measured,
});

/** The layout of sample and tokenStats: unrolled up to UNROLLED_MAX_VOCAB logits on either variant, the variant's own above. */
export const softmaxRowLayout = (variant: KernelVariant, vocab: number): RowLayout => (vocab <= UNROLLED_MAX_VOCAB ? 'unrolled' : variant);

const rowLayouts = <T>(kernels: Record<RowLayout, T>, measured: string): Selector<T> => ({
  options: [kernels.unrolled, kernels.thread, kernels.subgroup],
  pick: (variant, shape) => kernels[softmaxRowLayout(variant, shape.vocab)],
  measured,
});

/** The kernel of each stage, in the order an iteration runs them. */
export const KERNEL_SELECTORS = {
  embedProject: only(embedProjectKernel),
  forward: only(forwardKernel),
  sample: rowLayouts(
    { unrolled: sampleUnrolledKernel, thread: sampleKernel, subgroup: sampleSubgroupKernel },
    'H200, 589,824 rows of 19 logits: unrolled 0.018 ms, a thread per row 0.039, a subgroup per four rows 0.111 ' +
      '(BENCHMARKS.md, the H200 a third time; bench/results/h200-night/final-kernels-rows.json); SwiftShader, 1,152 rows: ' +
      'unrolled 0.568 ms against 0.668. Above 64 logits unmeasured on hardware (every H200 case had 19).',
  ),
  tokenStats: rowLayouts(
    { unrolled: tokenStatsUnrolledKernel, thread: tokenStatsKernel, subgroup: tokenStatsSubgroupKernel },
    'H200, 589,824 rows of 19 logits: unrolled 0.019 ms, a thread per row 0.042, a subgroup per four rows 0.099 ' +
      '(same run); SwiftShader, 1,152 rows: unrolled 0.606 ms against 0.776. Above 64 logits unmeasured on hardware.',
  ),
  infoGain: only(infoGainKernel),
  trajStats: only(trajStatsKernel),
  trajGradNorm: only(trajGradNormKernel),
  advantage: only(advantageKernel),
  gae: only(gaeKernel),
  criticUpdate: only(criticUpdateKernel),
  tokenBaseline: only(tokenBaselineKernel),
  whiten: only(whitenKernel),
  essScale: only(essScaleKernel),
  seqRatio: only(seqRatioKernel),
  ppoLoss: only(ppoLossKernel),
  logitGrad: byVariant(
    logitGradKernel,
    logitGradSubgroupKernel,
    'H200, 589,824 rows of 19 logits: a subgroup per four rows 0.077 ms, a thread per row 0.184 (2.4x; ' +
      'bench/results/h200-night/final-kernels-rows.json); SwiftShader, 1,152 rows: a thread per row 0.60 ms against 0.67.',
  ),
  headGrad: only(headGradKernel),
  hiddenGrad: only(hiddenGradKernel),
  slotGrad: only(slotGradKernel),
  firstLayerGrad: byVariant(
    firstLayerGradKernel,
    firstLayerGradSubgroupKernel,
    'H200: a subgroup per embedding entry 0.018 ms at H = 256 and 0.067 at H = 1,024, a thread per output 0.172 and 0.680 ' +
      '(bench/results/h200-night/final-kernels-rows.json); SwiftShader 1.1-1.3x slower with subgroups (2.4 -> 3.1 ms at the default model).',
  ),
  optimizerStep: only(optimizerStepKernel),
  stats: only(statsKernel),
  finiteCheck: only(finiteCheckKernel),
  negOutShare: only(negOutShareKernel),
  mismatchStats: only(mismatchStatsKernel),
} as const;

/** Configuration choices that compile pipelines of their own or change a kernel's layout. */
export const CONFIG_SELECTORS = {
  /** gradNorm's entries per workgroup of pass 1 (optimizerStep's config `block`). */
  gradNormBlock: byVariant(
    GRAD_NORM_BLOCK,
    GRAD_NORM_BLOCK_HARDWARE,
    'H200: blocks of 2,048 took 0.0051 ms at 38,211 parameters and 0.0061 at 151,875, blocks of 8,192 0.0072 at both ' +
      '(bench/results/h200-night/final-kernels-rows.json); SwiftShader 2-4x slower with 2,048 (1.81 -> 7.93 ms at 38,211).',
  ),
  /** stats' pass 2 with its histogram bins in workgroups of their own (StatsConfig.spreadBins). */
  statsSpreadBins: byVariant(
    false,
    true,
    'H200, 589,824 rows: 0.024 ms spread against 0.028 in one workgroup (bench/results/h200-night/final-kernels-rows.json; ' +
      '0.046 against 0.066 with the earlier 512-row chunks); SwiftShader: the extra workgroups cost ~25 ms a call.',
  ),
  /** Copies of each histogram in stats' pass 1 (StatsConfig.histCopies): a pipeline per value. */
  statsHistCopies: byVariant(
    1,
    STATS_MAX_HIST_COPIES,
    'Untimed on hardware (eight copies measured no change on the H200, 0.046 ms either way); SwiftShader 5-15 % slower at 73,728 rows.',
  ),
  /** The run's group size compiled into advantage (AdvantageConfig.groupSize; 0: none): a pipeline per size. */
  advantageGroupSize: {
    options: [0, ...Array.from({ length: ADVANTAGE_MAX_FIXED_GROUP - 1 }, (_, i) => i + 2)],
    pick: (variant: KernelVariant, shape: SelectorShape): number =>
      variant === 'subgroup' && shape.group >= 2 && shape.group <= ADVANTAGE_MAX_FIXED_GROUP ? shape.group : 0,
    measured: 'Untimed on hardware (modelled on the unrolled row kernels, faster on the H200); SwiftShader slower with loops of compiled-in trip counts.',
  },
} as const;

/** The kernel of every stage for `variant` at `shape`, by stage name. */
export function selectKernels(variant: KernelVariant, shape: SelectorShape) {
  return Object.fromEntries(Object.entries(KERNEL_SELECTORS).map(([stage, s]) => [stage, s.pick(variant, shape)])) as {
    [K in keyof typeof KERNEL_SELECTORS]: ReturnType<(typeof KERNEL_SELECTORS)[K]['pick']>;
  };
}
