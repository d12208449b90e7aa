// Pass 2 of the two-level row reductions (kernels/reduce.ts; pass 1 is headGrad or slotGrad):
// one thread per output, summing the per-chunk partial sums in chunk order,
//   grads[dstOff + o] = sum_{c = 0, 1, ..., chunks - 1} partials[c * outputs + o].
// It overwrites its range of the destination bound as `grads` (the gradient of this minibatch, or
// slotGrad's own G buffer), as the one-pass kernels did.

@group(0) @binding(0) var<uniform> u: ChunkSum;
@group(0) @binding(1) var<storage, read> partials: array<f32>;      // [chunks, outputs]
@group(0) @binding(2) var<storage, read_write> grads: array<f32>;   // flat gradient (paramLayout)

override workgroupSize: u32 = 64;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let o = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (o >= u.outputs) {
    return;
  }
  var acc = 0.0;
  for (var c = 0u; c < u.chunks; c++) {
    acc += partials[c * u.outputs + o];
  }
  grads[u.dstOff + o] = acc;
}
