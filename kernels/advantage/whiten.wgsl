// Masked batch whitening, dispatch 1 of 3 (reference: whitenCpu in whiten.ts; then
// whitenCombine.wgsl and whitenApply.wgsl; shared declarations: whitenMoments.wgsl). Workgroup w
// owns the fixed block of rows [w block, min((w + 1) block, numRows)) and writes its masked
// moments (n, pivot, off, m2) to partials[w]. Thread t takes rows w block + t, + workgroupSize, ...
// in that order, one at a time (Welford's update is the merge with a one-row set), then a fixed
// tree merges the threads: the order depends on numRows alone, the same bits on every run.

@group(0) @binding(0) var<uniform> u: Whiten;
@group(0) @binding(1) var<storage, read> mask: array<f32>;                // [numRows] 0/1
@group(0) @binding(2) var<storage, read> adv: array<f32>;                 // [numRows]
@group(0) @binding(3) var<storage, read_write> partials: array<vec4f>;    // [blocks + 1] moments

override workgroupSize: u32 = 256;

@compute @workgroup_size(workgroupSize)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  // blocks <= workgroupSize: a 1-D grid.
  let w = wid.x;
  let start = w * u.block;
  let end = min(start + u.block, u.numRows);
  var m = vec4f(0.0);
  for (var i = start + lid; i < end; i += workgroupSize) {
    // Both loads first, so they do not wait on each other.
    let x = adv[i];
    if (mask[i] != 0.0) {
      m = mergeMoments(m, vec4f(1.0, x, 0.0, 0.0));
    }
  }
  let total = reduceMoments(lid, m, workgroupSize / 2u);
  if (lid == 0u) {
    partials[w] = total;
  }
}
