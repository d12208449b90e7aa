// Masked batch whitening in one dispatch, after a producer that left its workgroups' moments
// behind the rows (whitenFold.wgsl; host side: whitenFoldApplyKernel in whiten.ts). The entry
// point is whitenApplyEntry.wgsl's: each workgroup merges every block's moments (thread t blocks
// t, t + workgroupSize, ... in that order, then the fixed tree) and whitens its rows. That is the
// merge whitenCombine.wgsl does once, repeated in each workgroup instead of a dependent dispatch,
// without whiten.wgsl's pass over the rows, which the producer did while writing them. This file
// says where the records are.
// `block` of the uniform is unused; `blocks` is the producer's record count, `treeTop` the tree's
// first stride over min(blocks, workgroupSize) slots.

@group(0) @binding(0) var<uniform> u: Whiten;
@group(0) @binding(1) var<storage, read> mask: array<f32>;          // [numRows] 0/1
// [numRows] rows, then [4 blocks] moments records (n, pivot, off, m2) from the producer.
@group(0) @binding(2) var<storage, read_write> adv: array<f32>;

override workgroupSize: u32 = 256;

fn blockMoments(j: u32) -> vec4f {
  let at = u.numRows + 4u * j;
  return vec4f(adv[at], adv[at + 1u], adv[at + 2u], adv[at + 3u]);
}
