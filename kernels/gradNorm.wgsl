// Global gradient norm sqrt(sum g^2) in a single workgroup (reference: gradNormCpu in adam.ts):
// each thread sums a strided slice in order, then a fixed tree in workgroup memory, so the result
// is the same on every run (no atomics).

struct GradNorm {
  n: u32,
}

@group(0) @binding(0) var<uniform> u: GradNorm;
@group(0) @binding(1) var<storage, read> grads: array<f32>;         // [n]
@group(0) @binding(2) var<storage, read_write> norm: array<f32>;    // [1]

override workgroupSize: u32 = 256;

var<workgroup> partial: array<f32, workgroupSize>;

@compute @workgroup_size(workgroupSize)
fn main(@builtin(local_invocation_index) lid: u32) {
  var acc = 0.0;
  for (var i = lid; i < u.n; i += workgroupSize) {
    let g = grads[i];
    acc += g * g;
  }
  partial[lid] = acc;
  workgroupBarrier();
  for (var s = workgroupSize / 2u; s > 0u; s >>= 1u) {
    if (lid < s) {
      partial[lid] += partial[lid + s];
    }
    workgroupBarrier();
  }
  if (lid == 0u) {
    norm[0] = sqrt(partial[0]);
  }
}
