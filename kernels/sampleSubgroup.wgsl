// sample.wgsl with one subgroup per row (rowSubgroup.wgsl): the inverse CDF is walked in blocks of
// one logit per lane, each block's cumulative sums an inclusive subgroup scan, and the first lane
// whose sum passes u is the token. Same u and same rule as the thread version; sums in another
// order, so a token can differ only where u is within rounding of a CDF edge.

const NO_TOKEN: u32 = 0xffffffffu;

// Row r of the call (rowSubgroup.wgsl's entry point hands each row to one subgroup).
fn subgroupRow(r: u32, lanes: vec2u) {
  let off = (u.zBase + r) * u.vocab;
  let ms = rowMaxSumExpSubgroup(off, u.vocab, lanes);
  let m = ms.x;
  let ls = log(ms.y);
  let pos = rowPos[u.rowBase + r];
  let x = hashUniform(u.seed, u.iter, pos, 0u);
  var cum = 0.0;
  var pick = NO_TOKEN;
  var last = 0u;
  for (var base = 0u; base < u.vocab; base += lanes.y) {
    let v = base + lanes.x;
    var p = 0.0;
    var allowed = false;
    if (v < u.vocab) {
      let zv = z[off + v];
      allowed = !isMasked(zv);
      p = select(0.0, exp((zv - m) - ls), allowed);
    }
    let c = cum + subgroupInclusiveAdd(p);
    last = max(last, subgroupMax(select(0u, v, allowed)));
    pick = subgroupMin(select(NO_TOKEN, v, allowed && x < c));
    if (pick != NO_TOKEN) {
      break;
    }
    cum = subgroupMax(c);
  }
  // Rounding can leave the total just under x: take the last allowed token.
  let tok = select(last, pick, pick != NO_TOKEN);
  if (subgroupElect()) {
    seq[pos] = tok;
    sampled[r * u.outStride + u.outOffset] = tok;
  }
}
