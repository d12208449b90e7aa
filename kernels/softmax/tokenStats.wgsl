// Per-row log-prob of the sampled token, entropy and sum of squared probabilities by log-sum-exp,
// one thread per row (reference: tokenStatsCpu in tokenStats.ts). Row r is rowBase + r in z and
// in the outputs; its sampled token is seq[rowPos[row]].
// The uniform and bindings here are the other versions' too: their sources start with this file.
// A subgroup per four rows instead: tokenStatsSubgroup.wgsl; the vocabulary compiled in: tokenStatsUnrolled.wgsl.
// With sampler options (precision, topK, topP: sampler.ts) every version computes the three
// statistics of the sampler's distribution with tokenStatsRowSampler below, the same code in each;
// with the defaults that path is never taken.

@group(0) @binding(0) var<uniform> u: TokenStats;
@group(0) @binding(1) var<storage, read> z: array<f32>;                // [rows, vocab] masked logits
@group(0) @binding(2) var<storage, read> seq: array<u32>;              // [N, seqLen] tokens
@group(0) @binding(3) var<storage, read> rowPos: array<u32>;           // [rows] flat positions
@group(0) @binding(4) var<storage, read_write> logp: array<f32>;       // [rows]
@group(0) @binding(5) var<storage, read_write> entropy: array<f32>;    // [rows] nats
@group(0) @binding(6) var<storage, read_write> sumP2: array<f32>;      // [rows]

override workgroupSize: u32 = 64;

@compute @workgroup_size(workgroupSize)
fn tokenStatsRows(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (i >= u.numRows) {
    return;
  }
  let row = u.rowBase + i;
  if (samplerOn()) {
    tokenStatsRowSampler(row);
    return;
  }
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

// Row `row`'s statistics under the sampler's distribution (samplerDist.wgsl; reference:
// tokenStatsCpu with sampler options): the kept tokens only, in the shifted logits as above.
// logp is the rollout's own log-prob of its token; a token outside the kept set gets the same
// formula (sampler.ts says why), never -inf.
fn tokenStatsRowSampler(row: u32) {
  let off = row * u.vocab;
  let d = samplerRow(off, u.vocab);
  var pd = 0.0;
  var s2 = 0.0;
  for (var v = 0u; v < u.vocab; v++) {
    let zv = samplerLogit(off, v);
    if (!samplerKept(zv, d)) {
      continue;
    }
    let dz = zv - d.m;
    pd += exp(dz - d.ls) * dz;
    s2 += exp(2.0 * dz);
  }
  let a = min(seq[rowPos[row]], u.vocab - 1u);
  logp[row] = (samplerLogit(off, a) - d.m) - d.ls;
  entropy[row] = d.ls - pd;
  sumP2[row] = s2 / (d.s * d.s);
}
