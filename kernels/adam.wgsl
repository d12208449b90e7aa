// Adam with global gradient-norm clipping, one thread per parameter (reference: adamCpu in adam.ts):
//   s = min(1, maxGradNorm / (norm + 1e-6)) (1 when maxGradNorm = 0),  g = s * grad
//   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;  p -= lr (m / bc1) / (sqrt(v / bc2) + eps)
// lr is multiplied by lrScale[1] (VCPO's ESS factor; 1 otherwise), read on the device so the factor
// computed in the same command buffer never travels to the host and back.
// bc1 = 1 - b1^t and bc2 = 1 - b2^t come per optimizer step from the host (one uniform per step).
// A NaN or Inf gradient norm skips the step (parameters and moments stay as they were) and sets
// the gradients bit (2) of health[0], as mixed-precision loss scalers skip overflowing steps.
// The uniform and the update itself: adamStep.wgsl (shared with adamMerged.wgsl).

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
  if (!normIsFinite(norm[0])) {
    if (i == 0u) {
      atomicOr(&health[0], 2u);
    }
    return;
  }
  adamUpdate(i, params[i], grads[i], m[i], v[i], clipFactor(norm[0]), lrScale[1]);
}
