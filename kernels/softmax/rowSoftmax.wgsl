// Row max and sum of exp(z - max) of one row of logits, for the kernels that bind `z`
// ([rows, vocab] masked logits): sample, tokenStats and logitGrad join this after their own source.
// Returns (m, s): lse = m + log(s), and pi_v = exp((z_v - m) - log(s)).
fn rowMaxSumExp(off: u32, vocab: u32) -> vec2f {
  var m = -F32_MAX;
  for (var v = 0u; v < vocab; v++) {
    m = max(m, z[off + v]);
  }
  var s = 0.0;
  for (var v = 0u; v < vocab; v++) {
    s += exp(z[off + v] - m);
  }
  return vec2f(m, s);
}
