/**
 * The subgroup variants of the per-row softmax kernels (sample, tokenStats, logitGrad): one
 * subgroup per row of logits instead of one thread (rowSubgroup.wgsl says why). Each variant has
 * the bindings, uniform and results of its thread version, up to the order of its sums, and needs
 * a device created with the `subgroups` feature and the `subgroup_id` WGSL language feature
 * (workers/gpuDevice.ts asks for the first only where the second exists); rowKernelVariant picks
 * one for a device.
 */
import rowSubgroupWGSL from './rowSubgroup.wgsl?raw';

export type RowKernelVariant = 'thread' | 'subgroup';

/**
 * Rows per workgroup of 64 invocations: 8 per subgroup of 32 (NVIDIA), 16 for 64 (AMD), 1 for
 * SwiftShader's subgroups of 4. Fewer would leave subgroups idle where they are narrow.
 */
export const SUBGROUP_ROWS_PER_GROUP = 16;
export const SUBGROUP_WORKGROUP_SIZE = 64;

/** A subgroup kernel's WGSL: its rows-per-workgroup constant, bindings, entry point and the shared helpers. */
export function subgroupRowSource(io: string, main: string): string {
  return `const ROWS_PER_GROUP: u32 = ${SUBGROUP_ROWS_PER_GROUP}u;\n${io}\n${main}\n${rowSubgroupWGSL}`;
}

export const subgroupRowWorkgroups = (numRows: number): number => Math.ceil(numRows / SUBGROUP_ROWS_PER_GROUP);

/**
 * The subgroup variant on a hardware adapter with subgroups; one thread per row elsewhere. On a
 * software adapter (SwiftShader: isFallbackAdapter) a "subgroup" is 4 lanes of one CPU core and
 * the subgroup kernels are 1-2x slower than the thread ones (BENCHMARKS.md); a device that cannot
 * say what its adapter is gets the thread variant too.
 */
export function rowKernelVariant(device: GPUDevice): RowKernelVariant {
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
