// Per-row log-prob of the sampled token, entropy and sum of squared probabilities by log-sum-exp,
// one thread per row (reference: tokenStatsCpu in tokenStats.ts). Row r is rowBase + r in z and
// in the outputs; its sampled token is seq[rowPos[row]].
// Uniform and bindings: tokenStatsIo.wgsl; a subgroup per four rows instead: tokenStatsSubgroup.wgsl.

override workgroupSize: u32 = 64;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (i >= u.numRows) {
    return;
  }
  let row = u.rowBase + i;
  let off = row * u.vocab;
  let ms = rowMaxSumExp(off, u.vocab);
  let m = ms.x;
  let s = ms.y;
  let ls = log(s); // lse = m + ls

  // Everything in the shifted logits d = z - m: the reference's lse - sum p z loses all digits in
  // f32 when |z| ~ 1e4 (p carries an error of ulp(1e4) relative, times z), while
  // H = ls - sum p d, logp = d_a - ls and sum p^2 = sum exp(2d) / s^2 are the same math and stay
  // accurate. Masked logits are skipped so that 0 * (-1e30) never enters the sums.
  var pd = 0.0;
  var s2 = 0.0;
  for (var v = 0u; v < u.vocab; v++) {
    let zv = z[off + v];
    if (isMasked(zv)) {
      continue;
    }
    let d = zv - m;
    pd += exp(d - ls) * d;
    s2 += exp(2.0 * d);
  }
  let a = min(seq[rowPos[row]], u.vocab - 1u);
  logp[row] = (z[off + a] - m) - ls;
  entropy[row] = ls - pd;
  sumP2[row] = s2 / (s * s);
}
