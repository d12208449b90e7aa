// logitGrad.wgsl with one subgroup per row (rowSubgroup.wgsl): the row's max and sum from subgroup
// reductions, then each lane writes every lanes.y-th entry of dz, so neighbouring lanes write
// neighbouring words.

// Row r of the call (rowSubgroup.wgsl's entry point hands each row to one subgroup).
fn subgroupRow(r: u32, lanes: vec2u) {
  let row = u.rowBase + r;
  let off = row * u.vocab;
  let g = dlogp[row];
  if (g == 0.0) {
    for (var v = lanes.x; v < u.vocab; v += lanes.y) {
      dz[off + v] = 0.0;
    }
    return;
  }
  let ms = rowMaxSumExpSubgroup(off, u.vocab, lanes);
  let m = ms.x;
  let ls = log(ms.y);
  let a = seq[rowPos[row]];
  for (var v = lanes.x; v < u.vocab; v += lanes.y) {
    let zv = z[off + v];
    let p = select(exp((zv - m) - ls), 0.0, isMasked(zv));
    dz[off + v] = (g * (select(0.0, 1.0, v == a) - p)) / u.temperature;
  }
}
