// Adam with global gradient-norm clipping, one thread per parameter (reference: adamCpu in adam.ts):
//   s = min(1, maxGradNorm / (norm + 1e-6)) (1 when maxGradNorm = 0),  g = s * grad
//   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;  p -= lr (m / bc1) / (sqrt(v / bc2) + eps)
// lr is multiplied by lrScale[1] (VCPO's ESS factor; 1 otherwise), read on the device so the factor
// computed in the same command buffer never travels to the host and back.
// bc1 = 1 - b1^t and bc2 = 1 - b2^t come per optimizer step from the host (one uniform per step).
// A NaN or Inf gradient norm skips the step (parameters and moments stay as they were) and sets
// the gradients bit (2) of health[0], as mixed-precision loss scalers skip overflowing steps.

struct Adam {
  n: u32,
  lr: f32,
  beta1: f32,
  beta2: f32,
  eps: f32,
  bc1: f32,
  bc2: f32,
  maxGradNorm: f32,
  oneMinusBeta1: f32, // 1 - beta1 rounded once from float64: 1 - f32(0.999) is off by 1.3e-5 relative
  oneMinusBeta2: f32,
}

@group(0) @binding(0) var<uniform> u: Adam;
@group(0) @binding(1) var<storage, read_write> params: array<f32>;   // [n]
@group(0) @binding(2) var<storage, read> grads: array<f32>;          // [n]
@group(0) @binding(3) var<storage, read_write> m: array<f32>;        // [n] first moment
@group(0) @binding(4) var<storage, read_write> v: array<f32>;        // [n] second moment
@group(0) @binding(5) var<storage, read> norm: array<f32>;           // [1] gradient norm
@group(0) @binding(6) var<storage, read_write> health: array<atomic<u32>>; // [1] bit flags
@group(0) @binding(7) var<storage, read> lrScale: array<f32>;        // [>= 2] lr factor at [1] (essScale.wgsl)

override workgroupSize: u32 = 64;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (i >= u.n) {
    return;
  }
  if ((bitcast<u32>(norm[0]) & 0x7f800000u) == 0x7f800000u) {
    if (i == 0u) {
      atomicOr(&health[0], 2u);
    }
    return;
  }
  var s = 1.0;
  if (u.maxGradNorm > 0.0) {
    s = min(1.0, u.maxGradNorm / (norm[0] + 1e-6));
  }
  let g = grads[i] * s;
  let mi = u.beta1 * m[i] + u.oneMinusBeta1 * g;
  let vi = u.beta2 * v[i] + u.oneMinusBeta2 * g * g;
  m[i] = mi;
  v[i] = vi;
  params[i] = params[i] - (u.lr * lrScale[1] * (mi / u.bc1)) / (sqrt(vi / u.bc2) + u.eps);
}
