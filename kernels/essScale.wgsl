// VCPO's learning-rate scale from the effective sample size of the sequence IS weights, in one
// workgroup (reference: essScaleCpu in essScale.ts). With lambda_n = trajStats[n].logIS over the
// live trajectories (len > 0):
//   ESS/N = exp(2 LSE(lambda) - LSE(2 lambda)) / N, computed as exp(2 log s1 - log s2) / N with
//   s1 = sum exp(lambda - m), s2 = sum exp(2 (lambda - m)), m = max lambda (no overflow at any m);
//   scale = min(1, rho / rhoBase), then sqrt (rule 0) or as is (rule 1); enabled 0 writes scale 1.
// Output: out[0] = ESS/N, out[1] = the learning-rate factor Adam multiplies its lr by.

struct EssScale {
  numTraj: u32,
  rule: u32,
  rhoBase: f32,
  enabled: u32,
}

@group(0) @binding(0) var<uniform> u: EssScale;
@group(0) @binding(1) var<storage, read> stats: array<TrajStats>;   // [numTraj] (trajStats.wgsl)
@group(0) @binding(2) var<storage, read_write> out: array<f32>;     // [2]

override workgroupSize: u32 = 256;


var<workgroup> red: array<f32, workgroupSize>;

fn reduce(lid: u32, x: f32, isMax: bool) -> f32 {
  red[lid] = x;
  workgroupBarrier();
  for (var s = workgroupSize / 2u; s > 0u; s >>= 1u) {
    if (lid < s) {
      red[lid] = select(red[lid] + red[lid + s], max(red[lid], red[lid + s]), isMax);
    }
    workgroupBarrier();
  }
  let r = red[0];
  workgroupBarrier();
  return r;
}

@compute @workgroup_size(workgroupSize)
fn main(@builtin(local_invocation_index) lid: u32) {
  var lamMax = -F32_MAX;
  var live = 0.0;
  for (var n = lid; n < u.numTraj; n += workgroupSize) {
    if (stats[n].len > 0.0) {
      lamMax = max(lamMax, stats[n].logIS);
      live += 1.0;
    }
  }
  let m = reduce(lid, lamMax, true);
  let count = reduce(lid, live, false);
  var s1 = 0.0;
  var s2 = 0.0;
  for (var n = lid; n < u.numTraj; n += workgroupSize) {
    if (stats[n].len > 0.0) {
      let e = stats[n].logIS - m;
      s1 += exp(e);
      s2 += exp(2.0 * e);
    }
  }
  let t1 = reduce(lid, s1, false);
  let t2 = reduce(lid, s2, false);
  if (lid == 0u) {
    let rho = select(1.0, exp(2.0 * log(t1) - log(t2)) / count, count > 0.0);
    let lin = min(1.0, rho / u.rhoBase);
    out[0] = rho;
    out[1] = select(1.0, select(sqrt(lin), lin, u.rule == 1u), u.enabled != 0u);
  }
}
