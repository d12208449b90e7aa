// tokenStats.wgsl with one subgroup per row (rowSubgroup.wgsl): the same shifted-logit formulas,
// each sum split over the lanes and added with subgroupAdd; one lane writes the row's results.

// Row r of the call (rowSubgroup.wgsl's entry point hands each row to one subgroup).
fn subgroupRow(r: u32, lanes: vec2u) {
  let row = u.rowBase + r;
  let off = row * u.vocab;
  let ms = rowMaxSumExpSubgroup(off, u.vocab, lanes);
  let m = ms.x;
  let s = ms.y;
  let ls = log(s);
  var pd = 0.0;
  var s2 = 0.0;
  for (var v = lanes.x; v < u.vocab; v += lanes.y) {
    let zv = z[off + v];
    if (isMasked(zv)) {
      continue;
    }
    let d = zv - m;
    pd += exp(d - ls) * d;
    s2 += exp(2.0 * d);
  }
  pd = subgroupAdd(pd);
  s2 = subgroupAdd(s2);
  if (subgroupElect()) {
    let a = min(seq[rowPos[row]], u.vocab - 1u);
    logp[row] = (z[off + a] - m) - ls;
    entropy[row] = ls - pd;
    sumP2[row] = s2 / (s * s);
  }
}
