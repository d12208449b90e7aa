// The combine of the global gradient norm's block sums (host side: gradNormKernel and
// adamMergedKernel in adam.ts), joined after the source of each kernel that runs it: gradNormSum.wgsl
// (one workgroup) and adamMerged.wgsl (every workgroup). The order is fixed by `blocks` and the
// workgroup size only, so both give the same bits. Both declare `partials` and run 256 threads.

var<workgroup> partial: array<f32, workgroupSize>;

// sum_{w < blocks} partials[w]: thread t adds partials[t], partials[t + workgroupSize], ... in that
// order, then a fixed tree in workgroup memory adds the thread sums. Every thread of the workgroup
// must call it (barriers); every thread gets the sum.
fn sumBlocks(lid: u32, blocks: u32) -> f32 {
  var acc = 0.0;
  for (var w = lid; w < blocks; w += workgroupSize) {
    acc += partials[w];
  }
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
