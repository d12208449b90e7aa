// OTB's per-token baseline in two passes (reference: tokenBaselineCpu in tokenBaseline.ts), each an
// entry point of this file over the same declarations (each binds the buffers it uses).
// Pass 1 (tokenBaselineW), one thread per trajectory: its cumulative logit-gradient proxy at each of
// its positions (its masked rows, in order),
//   wpos[n tp + p] = W_{n,p} = sum_{q <= p} w_{n,q},   w = max(1 - 2 pi_old + sum pi_old^2, 0),
// and NO_POSITION at the positions past its last masked row. Pass 2 then reads a member's W at a
// position instead of walking the member's rows for every row of its group.
// Pass 2 (tokenBaselineRows), one thread per row, from the W pass 1 wrote by position. A masked
// row at position p (its index among the trajectory's masked rows) gets
//   A = sum_m W_{m,p} (R_n - R_m) / (sum_m W_{m,p} + 1e-8) = R_n - B*_p,
// W_{m,p} = the cumulative logit-gradient proxy of member m up to its own position p (members
// shorter than p + 1 positions, NO_POSITION in wpos, are left out).

@group(0) @binding(0) var<uniform> u: TokenBaseline;
@group(0) @binding(1) var<storage, read> trajIn: array<TrajIn>;      // [N]
@group(0) @binding(2) var<storage, read> mask: array<f32>;           // [N * tp] 0/1
@group(0) @binding(3) var<storage, read> logpOld: array<f32>;        // [N * tp]
@group(0) @binding(4) var<storage, read> sumP2Old: array<f32>;       // [N * tp]
@group(0) @binding(5) var<storage, read_write> wpos: array<f32>;     // [N * tp] W by position
@group(0) @binding(6) var<storage, read_write> adv: array<f32>;      // [N * tp]

override workgroupSize: u32 = 64;

// W is a sum of terms >= 0 (or NaN): -1 is never one (NO_POSITION in tokenBaseline.ts).
const NO_POSITION: f32 = -1.0;

@compute @workgroup_size(workgroupSize)
fn tokenBaselineW(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let n = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (n >= u.numRows / u.tp) {
    return;
  }
  let base = n * u.tp;
  var W = 0.0;
  var q = 0u;
  for (var k = 0u; k < u.tp; k++) {
    let r = base + k;
    if (mask[r] != 0.0) {
      W += gradProxy(logpOld[r], sumP2Old[r]);
      wpos[base + q] = W;
      q++;
    }
  }
  for (; q < u.tp; q++) {
    wpos[base + q] = NO_POSITION;
  }
}

@compute @workgroup_size(workgroupSize)
fn tokenBaselineRows(
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
  var others = 0u;
  for (var mm = g0; mm < g0 + G; mm++) {
    let W = wpos[mm * u.tp + p];
    if (W != NO_POSITION) {
      if (mm != n) {
        others++;
      }
      num += W * (Rn - trajIn[mm].reward);
      den += W;
    }
  }
  if (u.zeroTail != 0u && others == 0u) {
    adv[i] = Rn * m;
    return;
  }
  adv[i] = num / (den + 1e-8) * m;   // +0 (not -0) for equal rewards
}
