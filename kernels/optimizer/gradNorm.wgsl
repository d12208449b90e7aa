// Global gradient norm, pass 1 of 2 (reference: gradNormCpu in adam.ts; pass 2: gradNormSum.wgsl;
// host side: gradNormKernel in adam.ts, a two-pass reduction of kernels/reduce.ts). Workgroup w
// owns the fixed block w of `block` consecutive entries and writes its sum of squares:
//   partials[w] = sum_{i = w block .. min((w + 1) block, n) - 1} g_i^2,   w < blocks = ceil(n / block)
// Thread t sums g[w block + t], g[w block + t + workgroupSize], ... in that order, then a fixed tree
// in workgroup memory adds the thread sums (treeSum, gradNormTree.wgsl). The order depends on n and
// the constants only, so the result is the same bits on every run (no atomics). A square past the
// f32 range is +Inf, and so is the norm: adam.wgsl skips such a step.

struct GradNorm {
  n: u32,
  block: u32,
  blocks: u32,
}

@group(0) @binding(0) var<uniform> u: GradNorm;
@group(0) @binding(1) var<storage, read> grads: array<f32>;             // [n]
@group(0) @binding(2) var<storage, read_write> partials: array<f32>;    // [blocks] sums of squares

override workgroupSize: u32 = 256;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let w = flatWorkgroup(wid, nwg);
  // Workgroups past the last block (2-D grid padding) sum nothing and write nothing.
  let start = min(w * u.block, u.n);
  let end = min(start + u.block, u.n);
  var acc = 0.0;
  var i = start + lid;
  // Four loads issued together, then added in index order as the plain loop would (same bits): the
  // thread waits out one memory latency per four entries instead of one per entry.
  for (; i + 3u * workgroupSize < end; i += 4u * workgroupSize) {
    let a = grads[i];
    let b = grads[i + workgroupSize];
    let c = grads[i + 2u * workgroupSize];
    let d = grads[i + 3u * workgroupSize];
    acc += a * a;
    acc += b * b;
    acc += c * c;
    acc += d * d;
  }
  for (; i < end; i += workgroupSize) {
    let g = grads[i];
    acc += g * g;
  }
  let total = treeSum(lid, acc);
  if (lid == 0u && w < u.blocks) {
    partials[w] = total;
  }
}
