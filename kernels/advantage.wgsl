// GRPO group advantage broadcast to policy-token rows, one thread per row (reference:
// grpoAdvantageCpu in advantage.ts):  A_n = (R_n - mean_g) / (std_g + eps)  (or R_n - mean_g),
// adv[n * tp + j] = A_n * mask[n * tp + j]; a group of size 1 uses mean 0 and std 1.
// The mean is taken around the group's first reward, so an all-equal group gives exactly 0 in f32
// as the float64 reference does (a plain f32 sum / G would not).

struct Advantage {
  numRows: u32,
  tp: u32,
  group: u32,
  scaleStd: u32,
  unbiasedStd: u32,
  eps: f32,
}

@group(0) @binding(0) var<uniform> u: Advantage;
@group(0) @binding(1) var<storage, read> rewards: array<f32>;       // [N]
@group(0) @binding(2) var<storage, read> mask: array<f32>;          // [N * tp] 0/1
@group(0) @binding(3) var<storage, read_write> adv: array<f32>;     // [N * tp]

override workgroupSize: u32 = 64;

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
  let n = i / u.tp;
  let G = u.group;
  let g0 = (n / G) * G;
  var mean = 0.0;
  var sd = 1.0;
  if (G > 1u) {
    let r0 = rewards[g0];
    var shift = 0.0;
    for (var k = 0u; k < G; k++) {
      shift += rewards[g0 + k] - r0;
    }
    mean = r0 + shift / f32(G);
    var ss = 0.0;
    for (var k = 0u; k < G; k++) {
      let e = rewards[g0 + k] - mean;
      ss += e * e;
    }
    sd = sqrt(ss / f32(select(G, G - 1u, u.unbiasedStd != 0u)));
  }
  var a = rewards[n] - mean;
  if (u.scaleStd != 0u) {
    a = a / (sd + u.eps);
  }
  adv[i] = a * mask[i];
}
