// Global gradient norm, pass 2 of 2 (reference: gradNormCpu in adam.ts; pass 1: gradNorm.wgsl),
// one workgroup:
//   norm[0] = sqrt(sum_{w < blocks} partials[w])
// in gradNormTree.wgsl's order; no blocks (n = 0) gives 0. `norm` is what adam.wgsl reads and the
// update's readback copies.

struct GradNorm {
  n: u32,
  block: u32,
  blocks: u32,
}

@group(0) @binding(0) var<uniform> u: GradNorm;
@group(0) @binding(1) var<storage, read> partials: array<f32>;        // [blocks] (gradNorm.wgsl)
@group(0) @binding(2) var<storage, read_write> norm: array<f32>;      // [1]

override workgroupSize: u32 = 256;

@compute @workgroup_size(workgroupSize)
fn main(@builtin(local_invocation_index) lid: u32) {
  let total = sumBlocks(lid, u.blocks);
  if (lid == 0u) {
    norm[0] = sqrt(total);
  }
}
