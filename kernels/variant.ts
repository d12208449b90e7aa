/**
 * Which version of the kernels that have two the GPU backend runs: one thread per output, or a
 * subgroup per output with subgroup reductions (sample, tokenStats and logitGrad:
 * kernels/rowSubgroup.ts, by the vocabulary: rowKernelVariant; firstLayerGrad's embedding
 * gradient: firstLayerGradSubgroup.wgsl).
 * The subgroup versions need a device created with the `subgroups` feature and WGSL's
 * `subgroup_id` builtins; they exist for hardware GPUs, where neighbouring lanes then read
 * neighbouring words. The subgroup variant is the hardware layout in one more way: gradNorm's
 * pass 1 takes blocks of 2,048 entries instead of 8,192 (gradNormBlockFor in kernels/adam.ts),
 * more workgroups with shorter load chains, and stats' pass 2 adds up its histogram bins in
 * workgroups of their own (statsSpreadBinsFor in kernels/stats.ts), which a GPU runs side by side
 * and SwiftShader one after another.
 */
export type KernelVariant = 'thread' | 'subgroup';

/**
 * Vocabulary from which the hardware variant's sample and tokenStats take a subgroup per row. On
 * an H200 at 19 logits a row a thread per row was 3-4x faster (sample 0.039 against 0.166 ms at
 * 589,824 rows, tokenStats 0.042 against 0.138 ms): a subgroup of 32 lanes left 13 idle and walked
 * 8 rows one after another, each with its reductions. From 64 logits a thread's row spans several
 * cache lines and its three passes over it grow with the row, where a subgroup's grow with rows/32.
 * Those figures are of subgroups that took one row at a time; they now take four at once
 * (rowSubgroup.wgsl), not yet timed on a GPU, so the crossover stays where it was measured.
 */
export const SUBGROUP_ROW_MIN_VOCAB = 64;

/**
 * The version of a per-row softmax kernel that `variant` runs at this vocabulary. logitGrad takes
 * the subgroup version whenever the variant does: it writes a whole row of gradients, which
 * neighbouring lanes write coalesced (0.121 against 0.184 ms for a thread per row on the H200 at
 * 19 logits, with one row per subgroup at a time); sample and tokenStats write one value a row (SUBGROUP_ROW_MIN_VOCAB).
 */
export function rowKernelVariant(variant: KernelVariant, kernel: 'sample' | 'tokenStats' | 'logitGrad', vocab: number): KernelVariant {
  if (variant === 'thread' || kernel === 'logitGrad') return variant;
  return vocab >= SUBGROUP_ROW_MIN_VOCAB ? 'subgroup' : 'thread';
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
