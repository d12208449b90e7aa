// The row cache of the unrolled per-row kernels (sampleUnrolled.wgsl, tokenStatsUnrolled.wgsl),
// joined after their own source, which declares the override vocabSize.

const UNROLLED_MAX_VOCAB: u32 = 64u;

// rowMaxSumExp (rowSoftmax.wgsl) over a cached row: the same order, the same bits.
fn unrolledMaxSumExp(row: ptr<function, array<f32, UNROLLED_MAX_VOCAB>>) -> vec2f {
  var m = -F32_MAX;
  for (var v = 0u; v < vocabSize; v++) {
    m = max(m, (*row)[v]);
  }
  var s = 0.0;
  for (var v = 0u; v < vocabSize; v++) {
    s += exp((*row)[v] - m);
  }
  return vec2f(m, s);
}
