/**
 * Which version of the kernels that have two the GPU backend runs: one thread per output, or a
 * subgroup per output with subgroup reductions (sample, tokenStats and logitGrad:
 * kernels/rowSubgroup.ts; firstLayerGrad's embedding gradient: firstLayerGradSubgroup.wgsl).
 * The subgroup versions need a device created with the `subgroups` feature and WGSL's
 * `subgroup_id` builtins; they exist for hardware GPUs, where neighbouring lanes then read
 * neighbouring words. The subgroup variant is the hardware layout in one more way: gradNorm's
 * pass 1 takes blocks of 2,048 entries instead of 8,192 (gradNormBlockFor in kernels/adam.ts),
 * more workgroups with shorter load chains, which a GPU runs side by side and SwiftShader one
 * after another.
 */
export type KernelVariant = 'thread' | 'subgroup';

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
