// Masked batch whitening in one dispatch, after a producer that left its workgroups' moments
// behind the rows (whitenFold.wgsl; host side: whitenFoldApplyKernel in whiten.ts). Each
// workgroup merges every block's moments, thread t blocks t, t + workgroupSize, ... in that order,
// then the fixed tree (whitenMoments.wgsl), and whitens its rows (whitenRows.wgsl): the merge
// whitenCombine.wgsl does once, repeated in each workgroup instead of a dependent dispatch, and
// without whiten.wgsl's pass over the rows, which the producer did while writing them.
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

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let r0 = flatWorkgroup(wid, nwg) * workgroupSize * APPLY_ROWS_PER_THREAD;
  let rows = loadApplyRows(r0, lid);
  var b = vec4f(0.0);
  for (var j = lid; j < u.blocks; j += workgroupSize) {
    b = mergeMoments(b, blockMoments(j));
  }
  writeApplyRows(r0, lid, rows, reduceMoments(lid, b, u.treeTop));
}
