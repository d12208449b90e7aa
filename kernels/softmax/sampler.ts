/**
 * The rollout's sampler as an inference engine runs it, when it is not the trainer
 * (docs/METHODS.md 5.19): the logits are stored in reduced precision before the softmax, and the
 * sampling distribution may be truncated to its top-k tokens and then to its top-p nucleus. The
 * trainer keeps f32 logits and the whole distribution, so even a fully on-policy step has
 * log pi_trainer(a) != log pi_sampler(a). This file is the reference the WGSL follows
 * (precision.wgsl, samplerDist.wgsl, and the sampler paths of sample*.wgsl and tokenStats*.wgsl).
 *
 * Precision (applied to every allowed logit; grammar-masked logits stay masked, never rounded):
 * - bf16: round to nearest, ties to even, on the f32 bit pattern (keep the top 16 bits): what a
 *   bf16 lm_head output is. A value past the largest finite bf16 saturates to it (see below).
 * - fp16: IEEE 754 binary16, round to nearest, ties to even, with subnormals (multiples of 2^-24
 *   below 2^-14, not flushed). |x| >= 65520, which IEEE rounds to infinity, saturates at 65504.
 * Saturation departs from IEEE on purpose: an infinite logit would make the softmax NaN (inf - inf),
 * and the playground's rule is that nothing turns into NaN; the tokens that overflow tie at the top.
 * The rounding is integer arithmetic on the bits, so the GPU and the CPU give the same bits
 * whatever the GPU's float conversion rounding or subnormal flushing would do.
 *
 * The logits the kernels get are already divided by the temperature, so the rounding acts on
 * z / tau; an engine rounds its raw logits and divides in f32 afterwards. The two agree at the
 * default tau = 1.
 *
 * Truncation, on the rounded logits zr of the allowed tokens (verl's rollout `top_k` / `top_p`,
 * applied as vLLM's apply_top_k_top_p: top-k first, then top-p on the renormalized top-k set):
 * - top-k (k >= 1; 0 is off): keep v iff fewer than k allowed tokens have a logit strictly above
 *   zr_v. Ties at the k-th logit are all kept, as vLLM masks only logits below the k-th value; k at
 *   or above the number of allowed tokens keeps them all.
 * - top-p (0 < p <= 1; 1 is off): keep v (among the top-k) iff the top-k mass strictly above it is
 *   below p: sum_{w: zr_w > zr_v} pi_k(w) < p. The most likely token always stays. A block of tied
 *   tokens at the boundary is kept whole, so the result does not depend on token order; vLLM sorts
 *   and cuts inside a tie in whatever order its sort left them.
 * Both conditions are monotone in zr_v, so the kept set is {allowed v : zr_v >= t} for one
 * threshold t, the smallest kept logit: samplerRow finds t, and every pass after it is one
 * comparison per token.
 *
 * The sampler's distribution is pi_s(v) = exp(zr_v - m) / S over kept v (m the row max, S the kept
 * sum, computed in f32 on the GPU as vLLM's sampler upcasts to f32), its log-prob
 * log pi_s(a) = (zr_a - m) - log S. A token the sampler did not keep has pi_s = 0; a token it drew
 * is always kept (same logits, same code). The log-prob path gives an allowed but unkept token the
 * same formula (the log-prob it would have had in the kept set's normalization) rather than -inf,
 * so a forced token (a hint, a reference turn) can never put an infinity into a ratio; the
 * corrections must not be applied to tokens the sampler did not draw.
 */
import { MASKED_LOGIT } from '../model/mlp';
import precisionWGSL from './precision.wgsl?raw';
import samplerDistWGSL from './samplerDist.wgsl?raw';

/** The WGSL of the sampler's distribution, joined after a kernel's own source (sample, tokenStats). */
export const samplerWGSL = `${samplerDistWGSL}\n${precisionWGSL}`;

export { SAMPLER_OFF, SAMPLER_PRECISIONS, samplerActive, type SamplerOptions, type SamplerPrecision } from './samplerOptions';
import { SAMPLER_OFF, SAMPLER_PRECISIONS, type SamplerOptions, type SamplerPrecision } from './samplerOptions';

/**
 * The uniform fields of the sampler options (kernels sample and tokenStats), after checking them.
 * `logitPrecision` is the index in SAMPLER_PRECISIONS (WGSL reserves the word `precision`).
 */
export function samplerUniform(o: SamplerOptions | undefined): { logitPrecision: number; topK: number; topP: number } {
  const s = o ?? SAMPLER_OFF;
  const precision = SAMPLER_PRECISIONS.indexOf(s.precision);
  if (precision < 0) throw new Error(`sampler precision ${String(s.precision)}: expected one of ${SAMPLER_PRECISIONS.join(', ')}`);
  if (!(Number.isInteger(s.topK) && s.topK >= 0 && s.topK <= 0xffffffff)) throw new Error(`sampler topK ${s.topK}: expected an integer >= 0 (0: off)`);
  if (!(s.topP > 0 && s.topP <= 1)) throw new Error(`sampler topP ${s.topP}: expected a number in (0, 1] (1: off)`);
  return { logitPrecision: precision, topK: s.topK, topP: s.topP };
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

const bitsOf = (x: number): number => {
  f32[0] = x;
  return u32[0]!;
};
const fromBits = (b: number): number => {
  u32[0] = b >>> 0;
  return f32[0]!;
};

/** Largest finite bf16, as f32 bits (3.3895e38). */
const BF16_MAX_BITS = 0x7f7f0000;
/** 65504, the largest finite fp16, and 65520, the least value IEEE rounds to fp16 infinity. */
const FP16_MAX_BITS = 0x477fe000;
const FP16_OVERFLOW_BITS = 0x477ff000;
/** 2^-14, the least normal fp16. */
const FP16_MIN_NORMAL_BITS = 0x38800000;

/** x (read as f32) rounded to bf16, nearest, ties to even, saturating; inf and NaN unchanged. */
export function roundBf16(x: number): number {
  const b = bitsOf(x);
  const a = b & 0x7fffffff;
  if (a >= 0x7f800000) return fromBits(b);
  // a < 2^31, so the sum cannot wrap; the carry out of the low 16 bits is the rounding up.
  const r = Math.min((a + 0x7fff + ((a >>> 16) & 1)) & 0xffff0000, BF16_MAX_BITS);
  return fromBits((b & 0x80000000) | r);
}

/** x (read as f32) rounded to IEEE binary16 with subnormals, nearest, ties to even, saturating at 65504. */
export function roundFp16(x: number): number {
  const b = bitsOf(x);
  const a = b & 0x7fffffff;
  if (a >= 0x7f800000) return fromBits(b);
  let r: number;
  if (a >= FP16_OVERFLOW_BITS) r = FP16_MAX_BITS;
  else if (a >= FP16_MIN_NORMAL_BITS) r = (a + 0x0fff + ((a >>> 13) & 1)) & 0xffffe000;
  else r = fp16SubnormalBits(a);
  return fromBits((b & 0x80000000) | r);
}

/**
 * |x| < 2^-14 (bits a) to the nearest multiple of 2^-24, ties to even, as f32 bits: the mantissa
 * with its leading 1 is shifted down to units of 2^-24 and the dropped bits decide the rounding.
 */
function fp16SubnormalBits(a: number): number {
  const e = a >>> 23;
  // Below 2^-25 (e < 102): less than half a unit, 0. f32 subnormals (e = 0) land here too.
  if (e < 102) return 0;
  const mant = (a & 0x7fffff) | 0x800000;
  const sh = 126 - e; // 14 .. 24
  let q = mant >>> sh;
  const rem = mant & ((1 << sh) - 1);
  const half = 1 << (sh - 1);
  if (rem > half || (rem === half && (q & 1) === 1)) q += 1;
  return bitsOf(q * 2 ** -24);
}

/** One logit as the sampler stores it: masked logits as they are, the others rounded. */
export function roundLogit(x: number, precision: SamplerPrecision): number {
  if (x <= MASKED_LOGIT || precision === 'fp32') return x;
  return precision === 'bf16' ? roundBf16(x) : roundFp16(x);
}

/** Largest finite f32 (F32_MAX in common.wgsl). */
const F32_MAX = fromBits(0x7f7fffff);

/** What the sampler's distribution of one row is, from which every pass reads. */
export interface SamplerRow {
  /** The row's logits as the sampler holds them (masked ones as they were). */
  zr: Float64Array;
  /** Row max of zr. */
  m: number;
  /** The smallest kept logit: v is kept iff it is allowed and zr_v >= t. */
  t: number;
  /**
   * Sum of exp(zr - m) over the kept tokens, at least 1 whenever a token is allowed (the row max
   * is kept); taken as max(sum, 1), so that a row with nothing allowed gets 0 for ls, not -inf.
   */
  s: number;
  /** log s: log pi_s(v) = (zr_v - m) - ls. */
  ls: number;
}

const allowed = (x: number) => x > MASKED_LOGIT;

/** The sampler's distribution of row `off` of z (see the header; samplerRow in samplerDist.wgsl). */
export function samplerRow(z: Float32Array, off: number, V: number, o: SamplerOptions): SamplerRow {
  const zr = new Float64Array(V);
  let m = -F32_MAX;
  for (let v = 0; v < V; v++) {
    zr[v] = roundLogit(z[off + v]!, o.precision);
    m = Math.max(m, zr[v]!);
  }
  // Top-k: the smallest logit with fewer than k allowed logits strictly above it.
  let tk = -F32_MAX;
  if (o.topK > 0) {
    tk = F32_MAX;
    for (let v = 0; v < V; v++) {
      if (!allowed(zr[v]!)) continue;
      let above = 0;
      for (let w = 0; w < V; w++) if (allowed(zr[w]!) && zr[w]! > zr[v]!) above++;
      if (above < o.topK) tk = Math.min(tk, zr[v]!);
    }
  }
  let t = tk;
  // The uniform holds topP as an f32: compare against the value the GPU sees.
  const p = Math.fround(o.topP);
  if (p < 1) {
    let massK = 0;
    for (let v = 0; v < V; v++) if (allowed(zr[v]!) && zr[v]! >= tk) massK += Math.exp(zr[v]! - m);
    t = F32_MAX;
    for (let v = 0; v < V; v++) {
      if (!(allowed(zr[v]!) && zr[v]! >= tk)) continue;
      let above = 0;
      for (let w = 0; w < V; w++) if (allowed(zr[w]!) && zr[w]! > zr[v]!) above += Math.exp(zr[w]! - m);
      if (above < p * massK) t = Math.min(t, zr[v]!);
    }
  }
  let s = 0;
  for (let v = 0; v < V; v++) if (allowed(zr[v]!) && zr[v]! >= t) s += Math.exp(zr[v]! - m);
  const sk = Math.max(s, 1);
  return { zr, m, t, s: sk, ls: Math.log(sk) };
}

/** Whether token v of a row is in the sampler's kept set. */
export const samplerKept = (d: SamplerRow, v: number): boolean => allowed(d.zr[v]!) && d.zr[v]! >= d.t;

/** The sampler's log-prob of token a (the stand-in of the header for an unkept allowed token). */
export const samplerLogp = (d: SamplerRow, a: number): number => d.zr[a]! - d.m - d.ls;
