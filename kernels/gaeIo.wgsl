// The uniform, bindings and row step of gae.wgsl and gaeUnrolled.wgsl (a trajectory's rows walked
// four at a time, or all at once with tp compiled into the pipeline).

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
