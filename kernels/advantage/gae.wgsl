// PPO's advantage with a tabular critic (reference: gaeCpu in critic.ts), one thread per
// trajectory, over its masked rows in order (docs/METHODS.md 4.1, verl compute_gae_advantage_return):
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

// One row of the backward walk: A and returns of row i from the row after it (vNext, aNext),
// written; returns (V_i, A_i) for the row before. A masked-out row gets zeros and passes them on.
fn gaeRow(i: u32, m: f32, v: f32, r: f32, next: vec2f) -> vec2f {
  if (m == 0.0) {
    adv[i] = 0.0;
    ret[i] = 0.0;
    return next;
  }
  let delta = r + u.gamma * next.x - v;
  let a = delta + u.gamma * u.lambda * next.y;
  adv[i] = a;
  ret[i] = a + v;
  return vec2f(v, a);
}

// The trajectory's rows are read four at a time (masks, then state keys, then the critic's
// values: every load of a step issued before the first is used), the walk itself stays in row
// order: a thread waits out three load latencies per four rows instead of three per row, which on
// an H200 left the kernel at 15 % of a copy's bandwidth. Same arithmetic as one row at a time.
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
  var j = 0u;
  for (; j + 3u < u.tp; j += 4u) {
    let m = vec4f(mask[base + j], mask[base + j + 1u], mask[base + j + 2u], mask[base + j + 3u]);
    for (var k = 0u; k < 4u; k++) {
      if (m[k] != 0.0) {
        last = i32(j + k);
      }
    }
  }
  for (; j < u.tp; j++) {
    if (mask[base + j] != 0.0) {
      last = i32(j);
    }
  }
  // Rows after the last masked one (none of them masked) get zeros.
  for (var k = u32(last + 1); k < u.tp; k++) {
    adv[base + k] = 0.0;
    ret[base + k] = 0.0;
  }
  if (last < 0) {
    return;
  }
  // The last masked row takes the reward (the first row of the first step); four rows a step, i
  // down to i - 3. The reward goes in through the walk as in the one-row version: a walk that
  // started from constants let SwiftShader fold (R - V) + V to R, a few ulps from the reference.
  let reward = trajIn[n].reward;
  let li = base + u32(last);
  var next = vec2f(0.0, 0.0);
  var jj = last;
  for (; jj >= 3; jj -= 4) {
    let i = base + u32(jj);
    let m = vec4f(mask[i], mask[i - 1u], mask[i - 2u], mask[i - 3u]);
    let key = vec4u(stateKey[i], stateKey[i - 1u], stateKey[i - 2u], stateKey[i - 3u]);
    let v = vec4f(critic[key.x], critic[key.y], critic[key.z], critic[key.w]);
    next = gaeRow(i, m.x, v.x, select(0.0, reward, i == li), next);
    next = gaeRow(i - 1u, m.y, v.y, 0.0, next);
    next = gaeRow(i - 2u, m.z, v.z, 0.0, next);
    next = gaeRow(i - 3u, m.w, v.w, 0.0, next);
  }
  for (; jj >= 0; jj--) {
    let i = base + u32(jj);
    next = gaeRow(i, mask[i], critic[stateKey[i]], select(0.0, reward, i == li), next);
  }
}
