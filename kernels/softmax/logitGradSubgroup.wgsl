// logitGrad.wgsl with a subgroup per four rows (rowSubgroup.wgsl): each row's max and sum from
// subgroup reductions, then each lane writes every lanes.y-th entry of dz, so neighbouring lanes
// write neighbouring words. A row with dlogp == 0 gets exact zeros, as in the thread version.

// Rows r of the call (rowSubgroup.wgsl's entry point hands each subgroup four rows at a time).
fn subgroupRows(r: vec4u, live: vec4<bool>, lanes: vec2u) {
  let row = u.rowBase + r;
  let off = row * u.vocab;
  // Loaded before the reductions, so that no row waits for them afterwards.
  let g = vec4f(dlogp[row.x], dlogp[row.y], dlogp[row.z], dlogp[row.w]);
  let a = vec4u(seq[rowPos[row.x]], seq[rowPos[row.y]], seq[rowPos[row.z]], seq[rowPos[row.w]]);
  let zero = g == vec4f(0.0);
  if (all(zero)) {
    for (var v = lanes.x; v < u.vocab; v += lanes.y) {
      writeRows(off, v, vec4f(0.0), live);
    }
    return;
  }
  let ms = rowMaxSumExpSubgroup(off, u.vocab, lanes);
  let ls = log(ms.s);
  for (var v = lanes.x; v < u.vocab; v += lanes.y) {
    let zv = rowLogits(off, v);
    let p = select(exp((zv - ms.m) - ls), vec4f(0.0), isMaskedRows(zv));
    let d = (g * (select(vec4f(0.0), vec4f(1.0), vec4u(v) == a) - p)) / u.temperature;
    writeRows(off, v, select(d, vec4f(0.0), zero), live);
  }
}

// Entry v of the live rows' dz.
fn writeRows(off: vec4u, v: u32, d: vec4f, live: vec4<bool>) {
  for (var j = 0u; j < 4u; j++) {
    if (live[j]) {
      dz[off[j] + v] = d[j];
    }
  }
}
