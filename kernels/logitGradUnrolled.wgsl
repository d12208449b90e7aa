// logitGrad.wgsl with the vocabulary fixed when the pipeline is compiled (the override vocabSize;
// host side: logitGradUnrolledKernel in mlp.ts), and dz written by the whole workgroup as one run
// of words. Phase 1, a thread per row: the row's logits load once, all together, into registers
// (rowUnrolled.wgsl), for its max and sum, as in sampleUnrolled.wgsl. Phase 2: the workgroup's rows
// are consecutive in z and dz, so the workgroup walks them as one flat run of rows * vocab entries
// and neighbouring threads write neighbouring words. A thread per row stores V * 4 bytes apart from
// its neighbours; on an H200 at 19 logits that made the row-in-registers version (0.147 ms) slower
// than a subgroup per four rows (0.077 ms, 33 % of a copy), whose stores are contiguous only within
// a row. Phase 2 reads each logit a second time, from the cache the first phase filled. Every entry
// is computed from the same values with the same operations as in logitGrad.wgsl: the same bits.
// Uniform and bindings: logitGradIo.wgsl (u.vocab is vocabSize).

override workgroupSize: u32 = 64;
// The default is for compilation checks; every call sets it (UNROLLED_MAX_VOCAB in rowUnrolled.ts).
override vocabSize: u32 = 64;

// Per row of the workgroup: (max, log of the sum of exponentials, dlogp), and its sampled token.
var<workgroup> rowTerms: array<vec3f, workgroupSize>;
var<workgroup> rowToken: array<u32, workgroupSize>;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let first = flatWorkgroup(wid, nwg) * workgroupSize;
  if (first + lid < u.numRows) {
    let row = u.rowBase + first + lid;
    let off = row * vocabSize;
    var zr: array<f32, UNROLLED_MAX_VOCAB>;
    for (var v = 0u; v < vocabSize; v++) {
      zr[v] = z[off + v];
    }
    let ms = unrolledMaxSumExp(&zr);
    rowTerms[lid] = vec3f(ms.x, log(ms.y), dlogp[row]);
    rowToken[lid] = seq[rowPos[row]];
  }
  workgroupBarrier();

  // Rows of this workgroup that exist (0 for the spare workgroups of a two-dimensional dispatch).
  let rows = select(0u, min(workgroupSize, u.numRows - first), first < u.numRows);
  let base = (u.rowBase + first) * vocabSize;
  for (var k = 0u; k < vocabSize; k++) {
    let e = k * workgroupSize + lid;
    if (e < rows * vocabSize) {
      let r = e / vocabSize;
      let v = e - r * vocabSize;
      let t = rowTerms[r];
      let g = t.z;
      let zv = z[base + e];
      // pi = exp(z - lse) taken as exp((z - m) - log s), as in logitGrad.wgsl.
      let p = select(exp((zv - t.x) - t.y), 0.0, isMasked(zv));
      let d = (g * (select(0.0, 1.0, v == rowToken[r]) - p)) / u.temperature;
      // A row without a gradient gets exact zeros, as logitGrad.wgsl writes them (not 0 * -p = -0).
      dz[base + e] = select(d, 0.0, g == 0.0);
    }
  }
}
