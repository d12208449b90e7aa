// sample.wgsl with the vocabulary fixed when the pipeline is compiled (the override vocabSize; host
// side: sampleUnrolledKernel in sample.ts): its loops over a row unroll, so the row's logits are
// loaded once, all together, and its three walks read them from registers. The thread version
// loads each logit again in each walk, V * 4 bytes apart between neighbouring threads; on an H200
// at 19 logits that took twice as long. Same operations in the same order: the same tokens, bit
// for bit. Joined after sample.wgsl (the uniform and bindings; u.vocab is vocabSize).

// The default is for compilation checks; every call sets it (UNROLLED_MAX_VOCAB in rowUnrolled.ts).
override vocabSize: u32 = 64;

@compute @workgroup_size(workgroupSize)
fn sampleUnrolled(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let r = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (r >= u.numRows) {
    return;
  }
  // The sampler path reads the row from memory as the thread version does: the same bits.
  if (samplerOn()) {
    sampleRowSampler(r);
    return;
  }
  let off = (u.zBase + r) * vocabSize;
  var row: array<f32, UNROLLED_MAX_VOCAB>;
  for (var v = 0u; v < vocabSize; v++) {
    row[v] = z[off + v];
  }
  let ms = unrolledMaxSumExp(&row);
  let m = ms.x;
  let ls = log(ms.y);

  let pos = rowPos[u.rowBase + r];
  let x = hashUniform(u.seed, u.iter, pos, 0u);
  var cum = 0.0;
  var pick = -1;
  var last = 0u;
  for (var v = 0u; v < vocabSize; v++) {
    let zv = row[v];
    if (isMasked(zv)) {
      continue;
    }
    last = v;
    cum += exp((zv - m) - ls);
    if (x < cum) {
      pick = i32(v);
      break;
    }
  }
  // Rounding can leave the total just under x: take the last allowed token.
  let tok = select(last, u32(pick), pick >= 0);
  seq[pos] = tok;
  sampled[r * u.outStride + u.outOffset] = tok;
}
