// OTB per-token baseline, pass 2 of 2, one thread per row (reference: tokenBaselineCpu in
// tokenBaseline.ts; pass 1, tokenBaselineW.wgsl, wrote each trajectory's W by position). A masked
// row at position p (its index among the trajectory's masked rows) gets
//   A = sum_m W_{m,p} (R_n - R_m) / (sum_m W_{m,p} + 1e-8) = R_n - B*_p,
// W_{m,p} = the cumulative logit-gradient proxy of member m up to its own position p (members
// shorter than p + 1 positions, NO_POSITION in wpos, are left out).

struct TokenBaseline {
  numRows: u32,
  tp: u32,
}

@group(0) @binding(0) var<uniform> u: TokenBaseline;
@group(0) @binding(1) var<storage, read> trajIn: array<TrajIn>;   // [N]
@group(0) @binding(2) var<storage, read> mask: array<f32>;        // [N * tp] 0/1
@group(0) @binding(3) var<storage, read> wpos: array<f32>;        // [N * tp] (tokenBaselineW.wgsl)
@group(0) @binding(4) var<storage, read_write> adv: array<f32>;   // [N * tp]

override workgroupSize: u32 = 64;

const NO_POSITION: f32 = -1.0;

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
  let m = mask[i];
  if (m == 0.0) {
    adv[i] = 0.0;
    return;
  }
  let n = i / u.tp;
  let j = i % u.tp;
  let Rn = trajIn[n].reward;
  let g0 = trajIn[n].groupStart;
  let G = trajIn[n].groupSize;
  if (G <= 1u) {
    adv[i] = Rn * m;
    return;
  }
  var p = 0u;
  for (var k = 0u; k < j; k++) {
    if (mask[n * u.tp + k] != 0.0) {
      p++;
    }
  }
  var num = 0.0;
  var den = 0.0;
  for (var mm = g0; mm < g0 + G; mm++) {
    let W = wpos[mm * u.tp + p];
    if (W != NO_POSITION) {
      num += W * (Rn - trajIn[mm].reward);
      den += W;
    }
  }
  adv[i] = num / (den + 1e-8) * m;   // +0 (not -0) for equal rewards
}
