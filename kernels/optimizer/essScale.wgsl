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
  trajBase: u32,   // first trajectory of the range (a minibatch: VCPO's ESS is per minibatch)
}

@group(0) @binding(0) var<uniform> u: EssScale;
@group(0) @binding(1) var<storage, read> stats: array<TrajStats>;   // [trajBase + numTraj] (trajStats.wgsl)
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

// Trajectory n's (len, logIS).
fn lenLogIS(n: u32) -> vec2f {
  return vec2f(stats[u.trajBase + n].len, stats[u.trajBase + n].logIS);
}

// (max lambda, live count) with trajectory x = (len, lambda) added.
fn foldMax(acc: vec2f, x: vec2f) -> vec2f {
  return select(acc, vec2f(max(acc.x, x.y), acc.y + 1.0), x.x > 0.0);
}

// (s1, s2) with trajectory x added: s1 + exp(lambda - m), s2 + exp(2 (lambda - m)).
fn foldExp(acc: vec2f, x: vec2f, m: f32) -> vec2f {
  if (x.x > 0.0) {
    let e = x.y - m;
    return vec2f(acc.x + exp(e), acc.y + exp(2.0 * e));
  }
  return acc;
}

// Both walks load four trajectories before folding them in, in trajectory order (the same bits
// as one at a time): the one workgroup waits out a memory latency per four of its steps, which at
// 65,536 trajectories (256 steps a thread) is most of its time.
@compute @workgroup_size(workgroupSize)
fn main(@builtin(local_invocation_index) lid: u32) {
  let w = workgroupSize;
  var ml = vec2f(-F32_MAX, 0.0);
  var n = lid;
  for (; n + 3u * w < u.numTraj; n += 4u * w) {
    let a = lenLogIS(n);
    let b = lenLogIS(n + w);
    let c = lenLogIS(n + 2u * w);
    let d = lenLogIS(n + 3u * w);
    ml = foldMax(foldMax(foldMax(foldMax(ml, a), b), c), d);
  }
  for (; n < u.numTraj; n += w) {
    ml = foldMax(ml, lenLogIS(n));
  }
  let m = reduce(lid, ml.x, true);
  let count = reduce(lid, ml.y, false);
  var s = vec2f(0.0, 0.0);
  n = lid;
  for (; n + 3u * w < u.numTraj; n += 4u * w) {
    let a = lenLogIS(n);
    let b = lenLogIS(n + w);
    let c = lenLogIS(n + 2u * w);
    let d = lenLogIS(n + 3u * w);
    s = foldExp(foldExp(foldExp(foldExp(s, a, m), b, m), c, m), d, m);
  }
  for (; n < u.numTraj; n += w) {
    s = foldExp(s, lenLogIS(n), m);
  }
  let t1 = reduce(lid, s.x, false);
  let t2 = reduce(lid, s.y, false);
  if (lid == 0u) {
    let rho = select(1.0, exp(2.0 * log(t1) - log(t2)) / count, count > 0.0);
    let lin = min(1.0, rho / u.rhoBase);
    out[0] = rho;
    out[1] = select(1.0, select(sqrt(lin), lin, u.rule == 1u), u.enabled != 0u);
  }
}
