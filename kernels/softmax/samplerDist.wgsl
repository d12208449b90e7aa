// The sampler's distribution of one row of logits (reference: samplerRow in sampler.ts, whose header
// defines it): logits rounded to the sampler's precision, then top-k, then top-p. For the kernels
// that bind `z` ([rows, vocab] masked logits) and a uniform `u` with the fields logitPrecision (0 fp32,
// 1 bf16, 2 fp16), topK (0: off) and topP (1: off): sample and tokenStats join this, with
// precision.wgsl, after their own source. One thread walks a row, in index order, as the reference
// does; the threshold search is quadratic in the vocabulary, which the sampler path accepts (the
// default path does not run it).

// Whether the sampler differs from the trainer's f32 softmax over the whole row.
fn samplerOn() -> bool {
  return u.logitPrecision != 0u || u.topK != 0u || u.topP < 1.0;
}

// Logit v of the row at `off` as the sampler holds it.
fn samplerLogit(off: u32, v: u32) -> f32 {
  return roundLogit(z[off + v], u.logitPrecision);
}

// m: row max of the sampler's logits; t: the smallest kept logit (v is kept iff it is allowed and
// its logit is >= t); s: the kept sum of exp(zr - m), at least 1 when a token is allowed;
// ls = log(max(s, 1)). log pi_s(v) = (zr_v - m) - ls.
struct SamplerRow {
  m: f32,
  t: f32,
  s: f32,
  ls: f32,
}

fn samplerKept(zr: f32, d: SamplerRow) -> bool {
  return !isMasked(zr) && zr >= d.t;
}

fn samplerRow(off: u32, vocab: u32) -> SamplerRow {
  var m = -F32_MAX;
  for (var v = 0u; v < vocab; v++) {
    m = max(m, samplerLogit(off, v));
  }
  // Top-k: the smallest logit with fewer than k allowed logits strictly above it (ties kept).
  var tk = -F32_MAX;
  if (u.topK > 0u) {
    tk = F32_MAX;
    for (var v = 0u; v < vocab; v++) {
      let zv = samplerLogit(off, v);
      if (isMasked(zv)) {
        continue;
      }
      var above = 0u;
      for (var w = 0u; w < vocab; w++) {
        let zw = samplerLogit(off, w);
        if (!isMasked(zw) && zw > zv) {
          above += 1u;
        }
      }
      if (above < u.topK) {
        tk = min(tk, zv);
      }
    }
  }
  // Top-p on the top-k set: the smallest logit whose top-k mass strictly above it is below p.
  var t = tk;
  if (u.topP < 1.0) {
    var massK = 0.0;
    for (var v = 0u; v < vocab; v++) {
      let zv = samplerLogit(off, v);
      if (!isMasked(zv) && zv >= tk) {
        massK += exp(zv - m);
      }
    }
    t = F32_MAX;
    for (var v = 0u; v < vocab; v++) {
      let zv = samplerLogit(off, v);
      if (isMasked(zv) || zv < tk) {
        continue;
      }
      var above = 0.0;
      for (var w = 0u; w < vocab; w++) {
        let zw = samplerLogit(off, w);
        if (!isMasked(zw) && zw > zv) {
          above += exp(zw - m);
        }
      }
      if (above < u.topP * massK) {
        t = min(t, zv);
      }
    }
  }
  var s = 0.0;
  for (var v = 0u; v < vocab; v++) {
    let zv = samplerLogit(off, v);
    if (!isMasked(zv) && zv >= t) {
      s += exp(zv - m);
    }
  }
  let sk = max(s, 1.0);
  return SamplerRow(m, t, sk, log(sk));
}
