// Masked batch whitening, dispatch 3 of 3 (reference: whitenCpu in whiten.ts; after whiten.wgsl
// and whitenCombine.wgsl; shared declarations: whitenMoments.wgsl), one thread per row, in place:
//   adv[i] = mask[i] != 0 ? ((adv[i] - pivot) - off) / sd : 0
// with (pivot, off, sd) = partials[blocks]. Each thread reads and writes its own row only.

@group(0) @binding(0) var<uniform> u: Whiten;
@group(0) @binding(1) var<storage, read> mask: array<f32>;                // [numRows] 0/1
@group(0) @binding(2) var<storage, read> partials: array<vec4f>;          // [blocks + 1]
@group(0) @binding(3) var<storage, read_write> adv: array<f32>;           // [numRows]

override workgroupSize: u32 = 256;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (i >= u.numRows) {
    return;
  }
  let s = partials[u.blocks];
  // With one masked row, adv - pivot is exactly 0: the pivot is that row's value and off is 0.
  adv[i] = select(0.0, ((adv[i] - s.x) - s.y) / s.z, mask[i] != 0.0);
}
