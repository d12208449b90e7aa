import { UNROLLED_MAX_VOCAB } from './softmax/rowUnrolled';

/**
 * Which version of the kernels that have two the GPU backend runs: one thread per output, or a
 * subgroup per output with subgroup reductions (logitGrad, and sample and tokenStats above 64
 * logits: kernels/rowSubgroup.ts, softmaxRowLayout; firstLayerGrad's embedding gradient:
 * firstLayerGradSubgroup.wgsl).
 * The subgroup versions need a device created with the `subgroups` feature and WGSL's
 * `subgroup_id` builtins; they exist for hardware GPUs, where neighbouring lanes then read
 * neighbouring words. The subgroup variant is the hardware layout in other ways too: the
 * gradient norm's first pass is done by firstLayerGradSubgroup (a block sum per workgroup, of the
 * outputs it writes and of W2 | b2) and its sum in every workgroup of Adam, so the optimizer step
 * is one dispatch instead of three (optimizerStepFor in kernels/adam.ts; on SwiftShader, where
 * every workgroup with barriers costs, that pair was measured slower); stats' pass 2 adds up its histogram bins in
 * workgroups of their own (statsSpreadBinsFor in kernels/stats.ts), which a GPU runs side by side
 * and SwiftShader one after another, and its pass 1 keeps 16 copies of each histogram
 * (statsHistCopiesFor); PPO's GAE runs with tp compiled in (gaeKernelFor in
 * kernels/critic.ts), logitGrad up to 64 logits with the vocabulary compiled in and each
 * workgroup's rows written as one run of words (logitGradKernelFor in kernels/mlp.ts), and the
 * advantage kernel with the run's group size compiled in (advantageGroupSizeFor in
 * kernels/advantage.ts), all three of which SwiftShader runs slower.
 */
export type KernelVariant = 'thread' | 'subgroup';

/**
 * The layouts of sample and tokenStats: a variant's own, or the unrolled one (kernels/rowUnrolled.ts:
 * a thread per row, the vocabulary compiled into the pipeline and the row held in registers).
 */
export type RowLayout = KernelVariant | 'unrolled';

/**
 * The layout of sample and tokenStats that `variant` runs at this vocabulary: the unrolled one up
 * to UNROLLED_MAX_VOCAB logits, whatever the variant, and above that the variant's own (on
 * hardware a subgroup per four rows, a lane per logit; elsewhere a thread per row).
 * On an H200 at 19 logits and 589,824 rows the unrolled versions took 0.018 ms (sample) and 0.019
 * ms (tokenStats), against 0.039 and 0.042 for a thread per row, which loads each logit again in
 * each of its walks V * 4 bytes from its neighbours', and 0.111 and 0.099 for a subgroup per four
 * rows (19 of 32 lanes busy, serial reductions); on SwiftShader 14-22 % less than a thread per row
 * (BENCHMARKS.md). logitGrad's unrolled version is only the subgroup variant's (logitGradKernelFor
 * in mlp.ts): its stores, not its loads, are what a thread per row gets wrong.
 */
export function softmaxRowLayout(variant: KernelVariant, vocab: number): RowLayout {
  return vocab <= UNROLLED_MAX_VOCAB ? 'unrolled' : variant;
}

/**
 * The subgroup variant on a hardware adapter with subgroups; one thread per output elsewhere. On a
 * software adapter (SwiftShader: isFallbackAdapter) a "subgroup" is 4 lanes of one CPU core and
 * the subgroup kernels are 1-2x slower than the thread ones (BENCHMARKS.md); a device that cannot
 * say what its adapter is gets the thread variant too.
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
