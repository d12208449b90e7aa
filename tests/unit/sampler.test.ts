/**
 * The sampler that is not the trainer (kernels/softmax/sampler.ts): its precision rounding bit by
 * bit on cases worked by hand, its top-k / top-p kept sets and log-probs on rows whose
 * probabilities are simple fractions, and sampleCpu / tokenStatsCpu with its options. The GPU
 * side is tests/gpu/sampler.gpu.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { MASKED_LOGIT } from '../../kernels/model/mlp';
import { sampleCpu } from '../../kernels/softmax/sample';
import {
  roundBf16,
  roundFp16,
  roundLogit,
  SAMPLER_OFF,
  samplerKept,
  samplerLogp,
  samplerRow,
  samplerUniform,
  type SamplerOptions,
} from '../../kernels/softmax/sampler';
import { tokenStatsCpu } from '../../kernels/softmax/tokenStats';
import { createRng } from '../../workers/core/rng';
import { expectClose } from '../helpers/expectClose';

const f = new Float32Array(1);
const u = new Uint32Array(f.buffer);
const bits = (x: number) => {
  f[0] = x;
  return u[0]!;
};
const ofBits = (b: number) => {
  u[0] = b;
  return f[0]!;
};
const opts = (o: Partial<SamplerOptions>): SamplerOptions => ({ ...SAMPLER_OFF, ...o });
const kept = (z: number[], o: Partial<SamplerOptions>) => {
  const d = samplerRow(Float32Array.from(z), 0, z.length, opts(o));
  return z.map((_, v) => v).filter((v) => samplerKept(d, v));
};
// Probabilities 1/2, 1/4, 1/8, 1/8 (ln of f32 values: the sums are within 1e-7 of the fractions).
const QUARTERS = [Math.log(4), Math.log(2), 0, 0];

describe('bf16 rounding of the f32 bits', () => {
  it('rounds to nearest, ties to even', () => {
    expect(roundBf16(1)).toBe(1);
    // 1 + 2^-8 is halfway between 1 (mantissa ...0) and 1 + 2^-7 (...1): the even one.
    expect(roundBf16(1 + 2 ** -8)).toBe(1);
    // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even).
    expect(roundBf16(1 + 3 * 2 ** -8)).toBe(1 + 2 ** -6);
    // Just above halfway rounds up.
    expect(bits(roundBf16(ofBits(0x3f808001)))).toBe(0x3f810000);
    expect(roundBf16(Math.PI)).toBe(3.140625);
    expect(roundBf16(-2.5)).toBe(-2.5);
  });
  it('saturates at the largest finite bf16 instead of overflowing, keeps inf and NaN', () => {
    expect(bits(roundBf16(ofBits(0x7f7fffff)))).toBe(0x7f7f0000);
    expect(bits(roundBf16(ofBits(0xff7fffff)))).toBe(0xff7f0000);
    expect(roundBf16(Infinity)).toBe(Infinity);
    expect(Number.isNaN(roundBf16(NaN))).toBe(true);
  });
  it('keeps f32 subnormals as bf16 subnormals', () => {
    expect(bits(roundBf16(ofBits(0x000116c2)))).toBe(0x00010000);
    expect(bits(roundBf16(ofBits(0x00018000)))).toBe(0x00020000); // a tie, to the even 2
  });
});

describe('fp16 rounding (IEEE binary16 with subnormals, saturating)', () => {
  it('rounds to nearest, ties to even, with 11 significant bits', () => {
    expect(roundFp16(0.1)).toBe(0.0999755859375);
    expect(roundFp16(1 + 2 ** -11)).toBe(1);
    expect(roundFp16(1 + 3 * 2 ** -11)).toBe(1 + 2 ** -9);
    expect(roundFp16(Math.PI)).toBe(3.140625);
  });
  it('saturates at 65504 where IEEE overflows to infinity (65520 and above)', () => {
    expect(roundFp16(65504)).toBe(65504);
    expect(roundFp16(65519)).toBe(65504);
    expect(roundFp16(65520)).toBe(65504);
    expect(roundFp16(1e5)).toBe(65504);
    expect(roundFp16(-1e30 * 0.5)).toBe(-65504);
  });
  it('keeps subnormals: multiples of 2^-24 below 2^-14, ties to even', () => {
    expect(roundFp16(2 ** -24)).toBe(2 ** -24);
    expect(roundFp16(2 ** -25)).toBe(0); // half a unit: to the even 0
    expect(roundFp16(1.5 * 2 ** -24)).toBe(2 ** -23); // 1.5 units: to 2
    expect(roundFp16(2.5 * 2 ** -24)).toBe(2 ** -23); // 2.5 units: to 2
    expect(roundFp16(1e-7)).toBe(2 * 2 ** -24);
    expect(roundFp16(3e-5)).toBe(503 * 2 ** -24);
    expect(roundFp16(2 ** -14 - 2 ** -25)).toBe(2 ** -14); // 1023.5 units: to the even 1024, the least normal
    expect(bits(roundFp16(-1e-9))).toBe(0x80000000); // -0
  });
  it('leaves masked logits masked and fp32 untouched', () => {
    expect(roundLogit(MASKED_LOGIT, 'fp16')).toBe(MASKED_LOGIT);
    expect(roundLogit(MASKED_LOGIT, 'bf16')).toBe(MASKED_LOGIT);
    expect(roundLogit(Math.fround(0.1), 'fp32')).toBe(Math.fround(0.1));
  });
});

describe('top-k and top-p kept sets', () => {
  it('top-k keeps the k largest, ties at the k-th all kept, and everything when k is past the vocabulary', () => {
    expect(kept([2, 1, 1, 0], { topK: 1 })).toEqual([0]);
    expect(kept([2, 1, 1, 0], { topK: 2 })).toEqual([0, 1, 2]);
    expect(kept([2, 1, 1, 0], { topK: 4 })).toEqual([0, 1, 2, 3]);
    expect(kept([2, 1, 1, 0], { topK: 1000 })).toEqual([0, 1, 2, 3]);
  });
  it('grammar-masked tokens are never kept and do not count towards k', () => {
    expect(kept([MASKED_LOGIT, 1, MASKED_LOGIT, 0], { topK: 1 })).toEqual([1]);
    expect(kept([MASKED_LOGIT, 1, MASKED_LOGIT, 0], { topK: 2 })).toEqual([1, 3]);
    expect(kept([MASKED_LOGIT, 1, MASKED_LOGIT, 0], { topP: 0.99 })).toEqual([1, 3]);
  });
  it('top-p keeps a token iff the mass strictly above it is below p', () => {
    expect(kept(QUARTERS, { topP: 0.45 })).toEqual([0]); // mass above token 1 is 1/2
    expect(kept(QUARTERS, { topP: 0.6 })).toEqual([0, 1]); // above tokens 2 and 3: 3/4
    expect(kept(QUARTERS, { topP: 1 })).toEqual([0, 1, 2, 3]);
  });
  it('a tie straddling the top-p boundary is kept whole', () => {
    // Sorted, 1/2 + 1/4 + 1/8 already passes 0.8, and vLLM would cut one of the two 1/8 tokens by
    // sort order; both have 3/4 strictly above them, below 0.8, so both stay.
    expect(kept(QUARTERS, { topP: 0.8 })).toEqual([0, 1, 2, 3]);
    const d = samplerRow(Float32Array.from(QUARTERS), 0, 4, opts({ topP: 0.8 }));
    expect(samplerLogp(d, 2)).toBe(samplerLogp(d, 3));
  });
  it('top-p acts on the top-k set renormalized (top-k first, as vLLM applies them)', () => {
    // Top-2 leaves 2/3 and 1/3: 2/3 lies above token 1, which passes p = 0.7 and not p = 0.6.
    expect(kept(QUARTERS, { topK: 2, topP: 0.7 })).toEqual([0, 1]);
    expect(kept(QUARTERS, { topK: 2, topP: 0.6 })).toEqual([0]);
    // Without top-k only 1/2 lies above token 1.
    expect(kept(QUARTERS, { topP: 0.6 })).toEqual([0, 1]);
  });
  it('the most likely token always stays, however small p is', () => {
    expect(kept([0, 0, 0], { topP: 1e-6 })).toEqual([0, 1, 2]); // nothing strictly above any of them
    expect(kept([3, 0, 0], { topP: 1e-6 })).toEqual([0]);
  });
  it('rounding makes ties that top-k then keeps together', () => {
    // 1 + 2^-9 and 1 are distinct in f32, equal in bf16 (8 significant bits).
    expect(kept([1 + 2 ** -9, 1, 0], { topK: 1 })).toEqual([0]);
    expect(kept([1 + 2 ** -9, 1, 0], { topK: 1, precision: 'bf16' })).toEqual([0, 1]);
  });
});

describe("the sampler's log-probs and statistics (tokenStatsCpu with sampler options)", () => {
  const stats = (z: number[], a: number, o: Partial<SamplerOptions>) =>
    tokenStatsCpu(Float32Array.from(z), z.length, Int32Array.from([a]), Uint32Array.from([0]), undefined, opts(o));
  const TOL = { atol: 1e-6, rtol: 1e-6 };

  it('truncation renormalizes the kept mass: every kept log-ratio is log(kept mass)', () => {
    // Kept {0, 1} of 1/2, 1/4, 1/8, 1/8: the sampler gives 2/3 and 1/3.
    const s0 = stats(QUARTERS, 0, { topP: 0.6 });
    const s1 = stats(QUARTERS, 1, { topP: 0.6 });
    expectClose(s0.logp, [Math.log(2 / 3)], TOL);
    expectClose(s1.logp, [Math.log(1 / 3)], TOL);
    const trainer = tokenStatsCpu(Float32Array.from(QUARTERS), 4, Int32Array.from([1]), Uint32Array.from([0]));
    expectClose([trainer.logp[0]! - s1.logp[0]!], [Math.log(3 / 4)], TOL);
    expectClose(s0.entropy, [-(2 / 3) * Math.log(2 / 3) - (1 / 3) * Math.log(1 / 3)], TOL);
    expectClose(s0.sumP2, [4 / 9 + 1 / 9], TOL);
  });
  it('top-k 1 gives its token log-prob 0, entropy 0 and sum p^2 1', () => {
    const s = stats([2, 1, 1, 0], 0, { topK: 1 });
    expect(s.logp[0]).toBe(0);
    expect(s.entropy[0]).toBe(0);
    expect(s.sumP2[0]).toBe(1);
  });
  it('an unkept allowed token gets the kept normalization, finite (the stand-in the header explains)', () => {
    const s = stats(QUARTERS, 3, { topP: 0.6 });
    expectClose(s.logp, [Math.log((1 / 8) / (3 / 4))], TOL);
  });
  it('bf16 ties two logits that f32 keeps apart: both get exactly log 1/2', () => {
    const z = [1 + 2 ** -8, 1];
    const s = stats(z, 0, { precision: 'bf16' });
    expect(s.logp[0]).toBe(Math.fround(Math.log(0.5)));
    const t = tokenStatsCpu(Float32Array.from(z), 2, Int32Array.from([0]), Uint32Array.from([0]));
    expect(t.logp[0]).toBeGreaterThan(Math.log(0.5));
  });
  it('fp16 overflow saturates into a tie at 65504, finite, where f32 keeps a gap of 4496', () => {
    const z = [70000, 65510, 0];
    const s = stats(z, 1, { precision: 'fp16' });
    expectClose(s.logp, [Math.log(0.5)], TOL);
    expectClose(s.entropy, [Math.log(2)], TOL);
    const t = tokenStatsCpu(Float32Array.from(z), 3, Int32Array.from([1]), Uint32Array.from([0]));
    expect(t.logp[0]).toBe(-4490);
  });
  it('fp32 without truncation is the trainer, bit for bit', () => {
    const rng = createRng(5);
    const V = 19;
    const z = Float32Array.from({ length: 40 * V }, () => (rng.next() < 0.3 ? MASKED_LOGIT : 3 * rng.normal()));
    for (let r = 0; r < 40; r++) z[r * V + (r % V)] = rng.normal();
    const seq = Int32Array.from({ length: 40 }, (_, r) => r % V);
    const rowPos = Uint32Array.from({ length: 40 }, (_, r) => r);
    const a = tokenStatsCpu(z, V, seq, rowPos);
    const b = tokenStatsCpu(z, V, seq, rowPos, undefined, SAMPLER_OFF);
    expect(b).toEqual(a);
    const sa = new Int32Array(40);
    const sb = new Int32Array(40);
    sampleCpu(z, V, rowPos, sa, 3, 4);
    sampleCpu(z, V, rowPos, sb, 3, 4, SAMPLER_OFF);
    expect(sb).toEqual(sa);
  });
});

describe('sampleCpu with sampler options', () => {
  it('draws only kept tokens, with the kept distribution', () => {
    const rows = 20000;
    const z = new Float32Array(rows * 4);
    for (let r = 0; r < rows; r++) z.set(QUARTERS, r * 4);
    const rowPos = Uint32Array.from({ length: rows }, (_, r) => r);
    const seq = new Int32Array(rows);
    sampleCpu(z, 4, rowPos, seq, 11, 2, opts({ topP: 0.6 }));
    const counts = [0, 0, 0, 0];
    for (const t of seq) counts[t]!++;
    expect(counts[2]).toBe(0);
    expect(counts[3]).toBe(0);
    // 2/3 with a standard error of sqrt(2/9 / 20000) = 0.0033: 5 of them.
    expect(Math.abs(counts[0]! / rows - 2 / 3)).toBeLessThan(0.017);
  });
  it('top-k 1 is greedy, and masked tokens are never drawn', () => {
    const rng = createRng(9);
    const rows = 200;
    const V = 7;
    const z = Float32Array.from({ length: rows * V }, () => (rng.next() < 0.4 ? MASKED_LOGIT : 2 * rng.normal()));
    for (let r = 0; r < rows; r++) z[r * V + (r % V)] = 2 * rng.normal();
    const rowPos = Uint32Array.from({ length: rows }, (_, r) => r);
    const seq = new Int32Array(rows);
    sampleCpu(z, V, rowPos, seq, 1, 1, opts({ topK: 1, precision: 'fp16' }));
    for (let r = 0; r < rows; r++) {
      const row = Array.from(z.subarray(r * V, r * V + V));
      expect(row[seq[r]!]).toBe(Math.max(...row));
    }
    sampleCpu(z, V, rowPos, seq, 1, 1, opts({ topP: 0.95, precision: 'bf16' }));
    for (let r = 0; r < rows; r++) expect(z[r * V + seq[r]!]).not.toBe(MASKED_LOGIT);
  });
});

describe('sampler options are checked', () => {
  it('refuses what the kernels cannot take, naming the option', () => {
    expect(() => samplerUniform(opts({ topP: 0 }))).toThrow(/topP 0: expected a number in \(0, 1\]/);
    expect(() => samplerUniform(opts({ topP: 1.5 }))).toThrow(/topP/);
    expect(() => samplerUniform(opts({ topK: -1 }))).toThrow(/topK -1/);
    expect(() => samplerUniform(opts({ topK: 1.5 }))).toThrow(/topK/);
    expect(() => samplerUniform(opts({ precision: 'fp8' as never }))).toThrow(/precision fp8/);
    expect(samplerUniform(undefined)).toEqual({ logitPrecision: 0, topK: 0, topP: 1 });
    expect(samplerUniform(opts({ precision: 'fp16', topK: 3, topP: 0.9 }))).toEqual({ logitPrecision: 2, topK: 3, topP: 0.9 });
  });
});
