// Adam with global gradient-norm clipping in the hardware variant (host side: adamMergedKernel and
// optimizerStepFor in adam.ts): gradNormSum.wgsl and adam.wgsl in one dispatch, after the block sums
// of gradNorm.wgsl (optimizerStepMerged) or of firstLayerGradSubgroup.wgsl (optimizerStepFused, the
// backend's since 2026-12-01: one per workgroup of it, `blocks` of them). Every workgroup adds the
// blocks in gradNormSum's order (gradNormTree.wgsl: the same norm, bit for bit, on the same
// blocks), workgroup 0 writes it to `norm` for the readback, and then every thread updates
// PARAMS_PER_THREAD parameters as adam.wgsl updates one.
// Why: on an H200 each dependent dispatch costs ~2-3 us whatever its size, and the gradient norm's
// two took 6.1 us at 151,875 parameters (593 KiB), where a copy of the same bytes takes 2.0 us. The
// parameters, gradients and moments are loaded before the tree, so their loads overlap it. On
// SwiftShader, where every workgroup with barriers costs ~0.5 ms, the thread variant keeps
// gradNormSum.wgsl's one workgroup and adam.wgsl's barrier-free ones.

@group(0) @binding(0) var<uniform> u: Adam;
@group(0) @binding(1) var<storage, read_write> params: array<f32>;   // [n]
@group(0) @binding(2) var<storage, read> grads: array<f32>;          // [n]
@group(0) @binding(3) var<storage, read_write> m: array<f32>;        // [n] first moment
@group(0) @binding(4) var<storage, read_write> v: array<f32>;        // [n] second moment
@group(0) @binding(5) var<storage, read> partials: array<f32>;       // [blocks] sums of squares
@group(0) @binding(6) var<storage, read_write> norm: array<f32>;     // [1] gradient norm (output)
@group(0) @binding(7) var<storage, read_write> health: array<atomic<u32>>; // [1] bit flags
@group(0) @binding(8) var<storage, read> lrScale: array<f32>;        // [>= 2] lr factor at [1] (essScale.wgsl)

override workgroupSize: u32 = 256;
const PARAMS_PER_THREAD: u32 = 4u;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  // Parameters i0 + k workgroupSize: neighbouring threads on neighbouring words.
  let w = flatWorkgroup(wid, nwg);
  let i0 = w * workgroupSize * PARAMS_PER_THREAD + lid;
  var p: array<f32, PARAMS_PER_THREAD>;
  var g: array<f32, PARAMS_PER_THREAD>;
  var m0: array<f32, PARAMS_PER_THREAD>;
  var v0: array<f32, PARAMS_PER_THREAD>;
  for (var k = 0u; k < PARAMS_PER_THREAD; k++) {
    let i = i0 + k * workgroupSize;
    if (i < u.n) {
      p[k] = params[i];
      g[k] = grads[i];
      m0[k] = m[i];
      v0[k] = v[i];
    }
  }
  // Uniform control flow up to here: no thread has returned.
  let total = sumBlocks(lid, u.blocks);
  let gradNorm = sqrt(total);
  let first = w == 0u && lid == 0u;
  if (first) {
    norm[0] = gradNorm;
  }
  if (!normIsFinite(gradNorm)) {
    if (first) {
      atomicOr(&health[0], 2u);
    }
    return;
  }
  let s = clipFactor(gradNorm);
  let lrs = lrScale[1];
  for (var k = 0u; k < PARAMS_PER_THREAD; k++) {
    let i = i0 + k * workgroupSize;
    if (i < u.n) {
      adamUpdate(i, p[k], g[k], m0[k], v0[k], s, lrs);
    }
  }
}
