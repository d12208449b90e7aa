// Masked batch whitening, dispatch 2 of 3 (reference: whitenCpu in whiten.ts; after whiten.wgsl,
// before whitenApply.wgsl; shared declarations: whitenMoments.wgsl), one workgroup: thread b takes
// block b's moments, the fixed tree merges them (treeTop levels), and
//   partials[blocks] = (pivot, off, sd, n),   sd = sqrt(m2 / (n - 1) + 1e-8), 1 when n <= 1
// so the mean is pivot + off. Without masked rows pivot = off = 0.

@group(0) @binding(0) var<uniform> u: Whiten;
@group(0) @binding(1) var<storage, read_write> partials: array<vec4f>;    // [blocks + 1]

override workgroupSize: u32 = 256;

@compute @workgroup_size(workgroupSize)
fn main(@builtin(local_invocation_index) lid: u32) {
  var b = vec4f(0.0);
  if (lid < u.blocks) {
    b = partials[lid];
  }
  let m = reduceMoments(lid, b, u.treeTop);
  if (lid == 0u) {
    var sd = 1.0;
    if (m.x > 1.0) {
      sd = sqrt(m.w / (m.x - 1.0) + 1e-8);
    }
    partials[u.blocks] = vec4f(m.y, m.z, sd, m.x);
  }
}
