// The sampler's logit precision (reference: roundBf16, roundFp16 and roundLogit in sampler.ts):
// integer arithmetic on the f32 bits, so the result does not depend on how the GPU converts or
// whether it flushes subnormals. Round to nearest, ties to even; a value past the format's largest
// finite number saturates there (IEEE would give infinity, and then the softmax NaN); inf and NaN
// pass through. Joined after the kernel's own source by the kernels that read it (samplerDist.wgsl).

const BF16_MAX_BITS: u32 = 0x7f7f0000u;        // largest finite bf16, 3.3895e38
const FP16_MAX_BITS: u32 = 0x477fe000u;        // 65504
const FP16_OVERFLOW_BITS: u32 = 0x477ff000u;   // 65520: IEEE rounds this and above to infinity
const FP16_MIN_NORMAL_BITS: u32 = 0x38800000u; // 2^-14

fn roundBf16(x: f32) -> f32 {
  let b = bitcast<u32>(x);
  let a = b & 0x7fffffffu;
  if (a >= 0x7f800000u) {
    return x;
  }
  // a < 2^31, so the sum cannot wrap; the carry out of the low 16 bits is the rounding up.
  let r = min((a + 0x7fffu + ((a >> 16u) & 1u)) & 0xffff0000u, BF16_MAX_BITS);
  return bitcast<f32>((b & 0x80000000u) | r);
}

// |x| < 2^-14 (bits a) to the nearest multiple of 2^-24, as f32 bits.
fn fp16SubnormalBits(a: u32) -> u32 {
  let e = a >> 23u;
  // Below 2^-25: less than half a unit, 0 (f32 subnormals included).
  if (e < 102u) {
    return 0u;
  }
  let mant = (a & 0x7fffffu) | 0x800000u;
  let sh = 126u - e; // 14 .. 24
  var q = mant >> sh;
  let rem = mant & ((1u << sh) - 1u);
  let half = 1u << (sh - 1u);
  if (rem > half || (rem == half && (q & 1u) == 1u)) {
    q += 1u;
  }
  // q <= 1024 and the scale is a power of two: exact, and at least 2^-24 (a normal f32).
  return bitcast<u32>(f32(q) * 5.9604644775390625e-8);
}

fn roundFp16(x: f32) -> f32 {
  let b = bitcast<u32>(x);
  let a = b & 0x7fffffffu;
  if (a >= 0x7f800000u) {
    return x;
  }
  var r: u32;
  if (a >= FP16_OVERFLOW_BITS) {
    r = FP16_MAX_BITS;
  } else if (a >= FP16_MIN_NORMAL_BITS) {
    r = (a + 0x0fffu + ((a >> 13u) & 1u)) & 0xffffe000u;
  } else {
    r = fp16SubnormalBits(a);
  }
  return bitcast<f32>((b & 0x80000000u) | r);
}

// p: 0 fp32, 1 bf16, 2 fp16 (SAMPLER_PRECISIONS in sampler.ts). Masked logits stay as they are.
fn roundLogit(x: f32, p: u32) -> f32 {
  if (isMasked(x) || p == 0u) {
    return x;
  }
  return select(roundFp16(x), roundBf16(x), p == 1u);
}
