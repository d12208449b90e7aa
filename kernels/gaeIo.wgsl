// The uniform, bindings and row step of gae.wgsl, gaeUnrolled.wgsl and gaeRows.wgsl (a
// trajectory's rows walked four at a time, all at once with tp compiled into the pipeline, or by
// one thread per row).

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

// One masked row's step of the backward walk: (V_i, A_i) from the masked row after it
// (vNext, aNext); its returns are A_i + V_i.
fn gaeStep(v: f32, r: f32, next: vec2f) -> vec2f {
  let delta = r + u.gamma * next.x - v;
  return vec2f(v, delta + u.gamma * u.lambda * next.y);
}

// One row of the backward walk, written: A and returns of row i from the row after it; returns
// what the row before steps from. A masked-out row gets zeros and passes `next` on. A masked row's
// A goes to the whitening hooks too (foldRow: whitenFold.wgsl, or whitenFoldNone.wgsl's no-op).
fn gaeRow(i: u32, m: f32, v: f32, r: f32, next: vec2f) -> vec2f {
  if (m == 0.0) {
    adv[i] = 0.0;
    ret[i] = 0.0;
    return next;
  }
  let s = gaeStep(v, r, next);
  adv[i] = s.y;
  ret[i] = s.y + v;
  foldRow(s.y, m);
  return s;
}
