// The global gradient norm's fixed-order sums (host side: gradNormKernel in adam.ts), joined after
// the source of each kernel that runs them: gradNorm.wgsl (a block's entries) and gradNormSum.wgsl
// (the block sums, one workgroup). The order is fixed by `blocks` and the workgroup size only.
// Each declares `partials` (the block sums).

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
