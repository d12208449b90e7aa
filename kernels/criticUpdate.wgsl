// The tabular critic's update (reference: criticUpdateCpu in critic.ts), one thread per table
// entry: the mean of the returns of the masked rows whose state is this entry, then
//   critic[k] += lr (mean return - critic[k])
// (a step of lr on the squared value error 1/2 (V - ret)^2 averaged over the entry's rows). Rows are
// scanned in order by one thread, so the update is deterministic; entries no row visits stay.

struct CriticUpdate {
  tableSize: u32,
  numRows: u32,
  lr: f32,
}

@group(0) @binding(0) var<uniform> u: CriticUpdate;
@group(0) @binding(1) var<storage, read> stateKey: array<u32>;    // [numRows]
@group(0) @binding(2) var<storage, read> mask: array<f32>;        // [numRows]
@group(0) @binding(3) var<storage, read> ret: array<f32>;         // [numRows]
@group(0) @binding(4) var<storage, read_write> critic: array<f32>; // [tableSize]

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
  var sum = 0.0;
  var count = 0.0;
  for (var i = 0u; i < u.numRows; i++) {
    if (mask[i] != 0.0 && stateKey[i] == k) {
      sum += ret[i];
      count += 1.0;
    }
  }
  if (count > 0.0) {
    let v = critic[k];
    critic[k] = v + u.lr * (sum / count - v);
  }
}
