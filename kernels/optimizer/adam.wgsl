// The optimizer's kernels: essScale (VCPO's effective sample size and the lr factor Adam reads) and
// adam, each an entry point of this file with its own uniform (both at binding 0: no entry point
// uses two) over shared buffer declarations (each binds the ones it uses; host side:
// kernels/optimizer/essScale.ts and adam.ts). gradNorm's two passes: gradNorm.wgsl.

@group(0) @binding(0) var<uniform> uEss: EssScale;
@group(0) @binding(0) var<uniform> uAdam: Adam;
@group(0) @binding(1) var<storage, read> stats: array<TrajStats>;  // [trajBase + numTraj] (trajStats.wgsl)
@group(0) @binding(2) var<storage, read_write> out: array<f32>;  // [2]
@group(0) @binding(3) var<storage, read_write> params: array<f32>;  // [n]
@group(0) @binding(4) var<storage, read> grads: array<f32>;  // [n]
@group(0) @binding(5) var<storage, read_write> m: array<f32>;  // [n] first moment
@group(0) @binding(6) var<storage, read_write> v: array<f32>;  // [n] second moment
@group(0) @binding(7) var<storage, read> norm: array<f32>;  // [1] gradient norm
@group(0) @binding(8) var<storage, read_write> health: array<atomic<u32>>;  // [1] bit flags
@group(0) @binding(9) var<storage, read> lrScale: array<f32>;  // [>= 2] lr factor at [1] (essScale)

override workgroupSize: u32 = 64;

// VCPO's learning-rate scale from the effective sample size of the sequence IS weights, in one
// workgroup (reference: essScaleCpu in essScale.ts). With lambda_n = trajStats[n].logIS over the
// live trajectories (len > 0):
//   ESS/N = exp(2 LSE(lambda) - LSE(2 lambda)) / N, computed as exp(2 log s1 - log s2) / N with
//   s1 = sum exp(lambda - m), s2 = sum exp(2 (lambda - m)), m = max lambda (no overflow at any m);
//   scale = min(1, rho / rhoBase), then sqrt (rule 0) or as is (rule 1); enabled 0 writes scale 1.
// Output: out[0] = ESS/N, out[1] = the learning-rate factor Adam multiplies its lr by.

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
  return vec2f(stats[uEss.trajBase + n].len, stats[uEss.trajBase + n].logIS);
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
fn essScale(@builtin(local_invocation_index) lid: u32) {
  let w = workgroupSize;
  var ml = vec2f(-F32_MAX, 0.0);
  var n = lid;
  for (; n + 3u * w < uEss.numTraj; n += 4u * w) {
    let a = lenLogIS(n);
    let b = lenLogIS(n + w);
    let c = lenLogIS(n + 2u * w);
    let d = lenLogIS(n + 3u * w);
    ml = foldMax(foldMax(foldMax(foldMax(ml, a), b), c), d);
  }
  for (; n < uEss.numTraj; n += w) {
    ml = foldMax(ml, lenLogIS(n));
  }
  let m = reduce(lid, ml.x, true);
  let count = reduce(lid, ml.y, false);
  var s = vec2f(0.0, 0.0);
  n = lid;
  for (; n + 3u * w < uEss.numTraj; n += 4u * w) {
    let a = lenLogIS(n);
    let b = lenLogIS(n + w);
    let c = lenLogIS(n + 2u * w);
    let d = lenLogIS(n + 3u * w);
    s = foldExp(foldExp(foldExp(foldExp(s, a, m), b, m), c, m), d, m);
  }
  for (; n < uEss.numTraj; n += w) {
    s = foldExp(s, lenLogIS(n), m);
  }
  let t1 = reduce(lid, s.x, false);
  let t2 = reduce(lid, s.y, false);
  if (lid == 0u) {
    let rho = select(1.0, exp(2.0 * log(t1) - log(t2)) / count, count > 0.0);
    let lin = min(1.0, rho / uEss.rhoBase);
    out[0] = rho;
    out[1] = select(1.0, select(sqrt(lin), lin, uEss.rule == 1u), uEss.enabled != 0u);
  }
}

// Adam with global gradient-norm clipping, one thread per parameter (reference: adamCpu in adam.ts):
//   s = min(1, maxGradNorm / (norm + 1e-6)) (1 when maxGradNorm = 0),  g = s * grad
//   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;  p -= lr (m / bc1) / (sqrt(v / bc2) + eps)
// lr is multiplied by lrScale[1] (VCPO's ESS factor; 1 otherwise), read on the device so the factor
// computed in the same command buffer never travels to the host and back.
// bc1 = 1 - b1^t and bc2 = 1 - b2^t come per optimizer step from the host (one uniform per step).
// A NaN or Inf gradient norm skips the step (parameters and moments stay as they were) and sets
// the gradients bit (2) of health[0], as mixed-precision loss scalers skip overflowing steps.

@compute @workgroup_size(workgroupSize)
fn adam(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (i >= uAdam.n) {
    return;
  }
  if ((bitcast<u32>(norm[0]) & 0x7f800000u) == 0x7f800000u) {
    if (i == 0u) {
      atomicOr(&health[0], 2u);
    }
    return;
  }
  var s = 1.0;
  if (uAdam.maxGradNorm > 0.0) {
    s = min(1.0, uAdam.maxGradNorm / (norm[0] + 1e-6));
  }
  let g = grads[i] * s;
  let mi = uAdam.beta1 * m[i] + uAdam.oneMinusBeta1 * g;
  let vi = uAdam.beta2 * v[i] + uAdam.oneMinusBeta2 * g * g;
  m[i] = mi;
  v[i] = vi;
  params[i] = params[i] - (uAdam.lr * lrScale[1] * (mi / uAdam.bc1)) / (sqrt(vi / uAdam.bc2) + uAdam.eps);
}
