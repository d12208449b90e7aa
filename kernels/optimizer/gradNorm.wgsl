// The global gradient norm in two passes (reference: gradNormCpu in adam.ts; host side:
// gradNormKernel in adam.ts, a two-pass reduction of kernels/reduce.ts), each an entry point of
// this file over the same declarations (each binds the buffers it uses).
// Pass 1 (gradNormBlocks): workgroup w owns the fixed block w of `block` consecutive entries and
// writes its sum of squares:
//   partials[w] = sum_{i = w block .. min((w + 1) block, n) - 1} g_i^2,   w < blocks = ceil(n / block)
// Thread t sums g[w block + t], g[w block + t + workgroupSize], ... in that order, then a fixed tree
// in workgroup memory adds the thread sums (treeSum). A square past the f32 range is +Inf, and so
// is the norm: adam.wgsl skips such a step.
// Pass 2 (gradNormSum), one workgroup: norm[0] = sqrt(sum_{w < blocks} partials[w]) in sumBlocks'
// order; no blocks (n = 0) gives 0. `norm` is what adam.wgsl reads and the update's readback copies.
// Every order depends on n and the constants only: the same bits on every run (no atomics).

@group(0) @binding(0) var<uniform> u: GradNorm;
@group(0) @binding(1) var<storage, read> grads: array<f32>;             // [n]
@group(0) @binding(2) var<storage, read_write> partials: array<f32>;    // [blocks] sums of squares
@group(0) @binding(3) var<storage, read_write> norm: array<f32>;        // [1]

override workgroupSize: u32 = 256;

var<workgroup> partial: array<f32, workgroupSize>;

// The sum of every thread's `acc` in a fixed tree in workgroup memory. Every thread of the
// workgroup must call it (barriers); every thread gets the sum.
fn treeSum(lid: u32, acc: f32) -> f32 {
  partial[lid] = acc;
  workgroupBarrier();
  for (var s = workgroupSize / 2u; s > 0u; s >>= 1u) {
    if (lid < s) {
      partial[lid] += partial[lid + s];
    }
    workgroupBarrier();
  }
  return partial[0];
}

// sum_{w < blocks} partials[w]: thread t adds partials[t], partials[t + workgroupSize], ... in that
// order, then treeSum adds the thread sums. Four loads go out together and are added in that same
// order (the same bits as one at a time).
fn sumBlocks(lid: u32, blocks: u32) -> f32 {
  var acc = 0.0;
  var w = lid;
  for (; w + 3u * workgroupSize < blocks; w += 4u * workgroupSize) {
    let a = partials[w];
    let b = partials[w + workgroupSize];
    let c = partials[w + 2u * workgroupSize];
    let d = partials[w + 3u * workgroupSize];
    acc += a;
    acc += b;
    acc += c;
    acc += d;
  }
  for (; w < blocks; w += workgroupSize) {
    acc += partials[w];
  }
  return treeSum(lid, acc);
}

@compute @workgroup_size(workgroupSize)
fn gradNormBlocks(
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

@compute @workgroup_size(workgroupSize)
fn gradNormSum(@builtin(local_invocation_index) lid: u32) {
  let total = sumBlocks(lid, u.blocks);
  if (lid == 0u) {
    norm[0] = sqrt(total);
  }
}
