// tokenStats.wgsl with the vocabulary fixed when the pipeline is compiled (the override vocabSize;
// host side: tokenStatsUnrolledKernel in tokenStats.ts): the row's logits are loaded once, all
// together, and its walks read them from registers (sampleUnrolled.wgsl says why). Same sums in
// the same order, the same bits. Joined after tokenStats.wgsl (the uniform and bindings; u.vocab is vocabSize).

// The default is for compilation checks; every call sets it (UNROLLED_MAX_VOCAB in rowUnrolled.ts).
override vocabSize: u32 = 64;

@compute @workgroup_size(workgroupSize)
fn tokenStatsUnrolled(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (i >= u.numRows) {
    return;
  }
  let row = u.rowBase + i;
  // The sampler path reads the row from memory as the thread version does: the same bits.
  if (samplerOn()) {
    tokenStatsRowSampler(row);
    return;
  }
  let off = row * vocabSize;
  var zr: array<f32, UNROLLED_MAX_VOCAB>;
  for (var v = 0u; v < vocabSize; v++) {
    zr[v] = z[off + v];
  }
  let ms = unrolledMaxSumExp(&zr);
  let m = ms.x;
  let s = ms.y;
  let ls = log(s);

  // In the shifted logits d = z - m, as tokenStats.wgsl says why. The sampled token's logit is
  // picked up on the way: a lookup row[a] at a token known only at run time would put the row in
  // memory instead of registers.
  let a = min(seq[rowPos[row]], vocabSize - 1u);
  var za = 0.0;
  var pd = 0.0;
  var s2 = 0.0;
  for (var v = 0u; v < vocabSize; v++) {
    let zv = zr[v];
    za = select(za, zv, v == a);
    if (isMasked(zv)) {
      continue;
    }
    let d = zv - m;
    pd += exp(d - ls) * d;
    s2 += exp(2.0 * d);
  }
  logp[row] = (za - m) - ls;
  entropy[row] = ls - pd;
  sumP2[row] = s2 / (s * s);
}
