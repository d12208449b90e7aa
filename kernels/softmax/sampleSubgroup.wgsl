// sample.wgsl with a subgroup per four rows (rowSubgroup.wgsl): the inverse CDF is walked in blocks
// of one logit per lane, each block's cumulative sums an inclusive subgroup scan, and the first
// lane whose sum passes u is the token. Same u and same rule as the thread version; sums in another
// order, so a token can differ only where u is within rounding of a CDF edge.

const NO_TOKEN: u32 = 0xffffffffu;

// Rows r of the call (rowSubgroup.wgsl's entry point hands each subgroup four rows at a time).
fn subgroupRows(r: vec4u, live: vec4<bool>, lanes: vec2u) {
  // The sampler path: a lane per row runs the thread version's sampleRowSampler (its threshold
  // search is a walk over the row for every token, not a scan across lanes), so the tokens are
  // the thread version's bit for bit. samplerOn() is uniform, so every lane takes this or none.
  if (samplerOn()) {
    for (var j = lanes.x; j < 4u; j += lanes.y) {
      if (live[j]) {
        sampleRowSampler(r[j]);
      }
    }
    return;
  }
  let off = (u.zBase + r) * u.vocab;
  let p4 = u.rowBase + r;
  let pos = vec4u(rowPos[p4.x], rowPos[p4.y], rowPos[p4.z], rowPos[p4.w]);
  let ms = rowMaxSumExpSubgroup(off, u.vocab, lanes);
  let ls = log(ms.s);
  let x = vec4f(
    hashUniform(u.seed, u.iter, pos.x, 0u), hashUniform(u.seed, u.iter, pos.y, 0u),
    hashUniform(u.seed, u.iter, pos.z, 0u), hashUniform(u.seed, u.iter, pos.w, 0u),
  );
  var cum = vec4f(0.0);
  var pick = vec4u(NO_TOKEN);
  var last = vec4u(0u);
  for (var base = 0u; base < u.vocab; base += lanes.y) {
    let v = base + lanes.x;
    var p = vec4f(0.0);
    var allowed = vec4<bool>(false);
    if (v < u.vocab) {
      let zv = rowLogits(off, v);
      allowed = !isMaskedRows(zv);
      p = select(vec4f(0.0), exp((zv - ms.m) - ls), allowed);
    }
    let c = cum + subgroupInclusiveAdd(p);
    last = max(last, subgroupMax(select(vec4u(0u), vec4u(v), allowed)));
    // A row keeps the first token it finds; the walk goes on while any row has none.
    let found = subgroupMin(select(vec4u(NO_TOKEN), vec4u(v), allowed & (x < c)));
    pick = select(pick, found, pick == vec4u(NO_TOKEN));
    if (all(pick != vec4u(NO_TOKEN))) {
      break;
    }
    cum = subgroupMax(c);
  }
  // Rounding can leave the total just under x: take the last allowed token.
  let tok = select(last, pick, pick != vec4u(NO_TOKEN));
  if (subgroupElect()) {
    for (var j = 0u; j < 4u; j++) {
      if (live[j]) {
        seq[pos[j]] = tok[j];
        sampled[r[j] * u.outStride + u.outOffset] = tok[j];
      }
    }
  }
}
