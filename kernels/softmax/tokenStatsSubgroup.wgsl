// tokenStats.wgsl with a subgroup per four rows (rowSubgroup.wgsl): the same shifted-logit
// formulas, each sum split over the lanes and added with subgroupAdd; one lane writes the rows'
// results.

// Rows r of the call (rowSubgroup.wgsl's entry point hands each subgroup four rows at a time).
fn subgroupRows(r: vec4u, live: vec4<bool>, lanes: vec2u) {
  let row = u.rowBase + r;
  // The sampler path: a lane per row runs the thread version's tokenStatsRowSampler (sample's
  // subgroup version says why), the same bits. samplerOn() is uniform: every lane or none.
  if (samplerOn()) {
    for (var j = lanes.x; j < 4u; j += lanes.y) {
      if (live[j]) {
        tokenStatsRowSampler(row[j]);
      }
    }
    return;
  }
  let off = row * u.vocab;
  // Loaded before the reductions, so that no row waits for them afterwards.
  let tok = vec4u(seq[rowPos[row.x]], seq[rowPos[row.y]], seq[rowPos[row.z]], seq[rowPos[row.w]]);
  let a = min(tok, vec4u(u.vocab - 1u));
  let za = vec4f(z[off.x + a.x], z[off.y + a.y], z[off.z + a.z], z[off.w + a.w]);
  let ms = rowMaxSumExpSubgroup(off, u.vocab, lanes);
  let m = ms.m;
  let s = ms.s;
  let ls = log(s);
  var pd = vec4f(0.0);
  var s2 = vec4f(0.0);
  for (var v = lanes.x; v < u.vocab; v += lanes.y) {
    let zv = rowLogits(off, v);
    // Masked logits add +0, which leaves the sums as they are (they start at +0, never -0).
    let keep = !isMaskedRows(zv);
    let d = zv - m;
    pd += select(vec4f(0.0), exp(d - ls) * d, keep);
    s2 += select(vec4f(0.0), exp(2.0 * d), keep);
  }
  pd = subgroupAdd(pd);
  s2 = subgroupAdd(s2);
  if (subgroupElect()) {
    let lp = (za - m) - ls;
    let h = ls - pd;
    let q = s2 / (s * s);
    for (var j = 0u; j < 4u; j++) {
      if (live[j]) {
        logp[row[j]] = lp[j];
        entropy[row[j]] = h[j];
        sumP2[row[j]] = q[j];
      }
    }
  }
}
