// The tabular critic's update, pass 2 of 2 (pass 1: criticUpdate.wgsl): one thread per table entry
// adds the chunks' (sum, count) in chunk order, then
//   critic[k] += lr (sum / count - critic[k])     if count > 0
// (a step of lr on the squared value error 1/2 (V - ret)^2 averaged over the entry's rows).
// Entries no row visits keep their value, bit for bit. Uniform: criticUniform.wgsl.

@group(0) @binding(1) var<storage, read> partials: array<vec2f>;   // [chunks, tableSize] (sum, count)
@group(0) @binding(2) var<storage, read_write> critic: array<f32>; // [tableSize]

override workgroupSize: u32 = 64;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let k = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (k >= u.tableSize) {
    return;
  }
  var acc = vec2f(0.0);
  for (var c = 0u; c < u.chunks; c++) {
    acc += partials[c * u.tableSize + k];
  }
  if (acc.y > 0.0) {
    let v = critic[k];
    critic[k] = v + u.lr * (acc.x / acc.y - v);
  }
}
