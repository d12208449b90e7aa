// PPO's advantage with a tabular critic (reference: gaeCpu in critic.ts), one thread per
// trajectory, over its masked rows in order (METHODS.md 4.1, verl compute_gae_advantage_return):
//   V_j = critic[key_j];  r_j = 0, except the last masked row: the outcome reward R_n
//   delta_j = r_j + gamma V_{next} - V_j  (V after the last row = 0)
//   A_j = delta_j + gamma lambda A_{next};  returns_j = A_j + V_j
// Masked-out rows get A = 0 and returns = 0. Batch whitening of A follows (whiten.wgsl).

struct Gae {
  numTraj: u32,
  tp: u32,
  gamma: f32,
  lambda: f32,
}

@group(0) @binding(0) var<uniform> u: Gae;
@group(0) @binding(1) var<storage, read> critic: array<f32>;      // [tableSize]
@group(0) @binding(2) var<storage, read> stateKey: array<u32>;    // [numTraj * tp], < tableSize
@group(0) @binding(3) var<storage, read> mask: array<f32>;        // [numTraj * tp]
@group(0) @binding(4) var<storage, read> trajIn: array<TrajIn>;   // [numTraj]
@group(0) @binding(5) var<storage, read_write> adv: array<f32>;   // [numTraj * tp]
@group(0) @binding(6) var<storage, read_write> ret: array<f32>;   // [numTraj * tp]

override workgroupSize: u32 = 64;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let n = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (n >= u.numTraj) {
    return;
  }
  let base = n * u.tp;
  var last = -1;
  for (var j = 0u; j < u.tp; j++) {
    adv[base + j] = 0.0;
    ret[base + j] = 0.0;
    if (mask[base + j] != 0.0) {
      last = i32(j);
    }
  }
  var vNext = 0.0;
  var aNext = 0.0;
  for (var jj = last; jj >= 0; jj--) {
    let i = base + u32(jj);
    if (mask[i] == 0.0) {
      continue;
    }
    let v = critic[stateKey[i]];
    let r = select(0.0, trajIn[n].reward, jj == last);
    let delta = r + u.gamma * vNext - v;
    let a = delta + u.gamma * u.lambda * aNext;
    adv[i] = a;
    ret[i] = a + v;
    vNext = v;
    aNext = a;
  }
}
