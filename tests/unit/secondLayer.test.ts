/**
 * The CPU backend's second layer runs blocked (forwardCpu eight allowed logits at a time, headGradCpu four
 * and eight rows at a time, hiddenDaCpu four hidden units of one row or of two rows at a time; the logits past the last eight four and two
 * at a time, the hidden units eight at a time) for speed. Blocking must not change a
 * single bit: every sum adds the same float64 terms in the same order as the textbook loops
 * written out below, so the comparison is exact (Object.is on every entry, NaN included). The
 * shapes straddle each block size (V around 8, H around 4 and 8, R around 4 and 8), and hold two or more
 * cancelling triples (below), where any reordering shows.
 *
 * The backward pieces also leave out rows whose gradient is all zero (masked rows, zero
 * advantages), which must not change a bit either: zeros of both signs, non-finite values on such
 * rows, and the kept rows' order are checked below.
 */
import { describe, expect, it } from 'vitest';
import { backwardCpu, forwardCpu, headGradCpu, hiddenDaCpu, initParams, MASKED_LOGIT, paramLayout, slotGradCpu, type MlpDims } from '../../kernels/model/mlp';
import { createRng } from '../../workers/core/rng';
import { forwardPlain, headGradPlain, hiddenDaPlain, slotGradPlain } from '../../kernels/model/mlpPlain';
import { expectSameBits } from '../helpers/expectClose';

/**
 * Random sums in float64 of f32 products are mostly exact, so any order gives the same bits. These
 * are built to cancel instead: along the summed index i, every third term is the first of its
 * triple negated (term i = -term i - 2) and the middle one is 2^-40 the size, so the small term is
 * rounded to the big one's ulp or kept whole depending on where it falls in the order.
 */
const BIG = 2 ** 20;
const SMALL = 2 ** -20;

function cancelling(i: number, base: (i: number) => number, sign = true): number {
  if (i % 3 === 2) return (sign ? -BIG : BIG) * base(i - 2);
  return i % 3 === 1 ? base(i) * SMALL : base(i) * BIG;
}

function fixture(V: number, H: number, R: number, scale: number) {
  const dims: MlpDims = { V, K: 3, D: 2, H };
  const rng = createRng(V * 10_000 + H * 100 + R);
  const P = paramLayout(dims);
  const p = initParams(dims, rng);
  for (let i = 0; i < p.length; i++) p[i] = p[i]! * scale;
  // Forward, summed over j: hidden unit j = 2 mod 3 copies unit j - 2 (same W1 column and b1, so
  // the same h), and its W2 row is the negated copy.
  const w2 = Float32Array.from(p.subarray(P.w2, P.w2 + H * V));
  for (let j = 0; j < H; j++) {
    for (let i = 0; i < dims.K * dims.D; i++) p[P.w1 + i * H + j] = p[P.w1 + i * H + j - (j % 3 === 2 ? 2 : 0)]!;
    p[P.b1 + j] = p[P.b1 + j - (j % 3 === 2 ? 2 : 0)]!;
    for (let v = 0; v < V; v++) p[P.w2 + j * V + v] = cancelling(j, (jj) => w2[jj * V + v]!);
  }
  const L = 12;
  const seq = new Int32Array(Math.ceil(R / (L - 1)) * L).map(() => rng.int(V));
  const rowPos = Uint32Array.from({ length: R }, (_, r) => Math.floor(r / (L - 1)) * L + 1 + (r % (L - 1)));
  const grammar = new Uint8Array(V * V).map(() => (rng.next() < 0.7 ? 1 : 0));
  // forwardCpu computes only the logits a row's grammar allows: a row that allows every token
  // (previous token 0) and one that allows none (previous token 1) besides the random ones.
  grammar.fill(1, 0, V);
  if (V > 1) grammar.fill(0, V, 2 * V);
  // headGrad, summed over rows r: row r = 2 mod 3 has row r - 2's h and its negated dz.
  const hRand = new Float32Array(R * H).map(() => Math.tanh(rng.normal()));
  const hRows = new Float32Array(R * H);
  const dzRand = new Float32Array(R * V).map(() => (rng.next() < 0.2 ? 0 : rng.normal() * scale));
  const dzRows = new Float32Array(R * V);
  for (let r = 0; r < R; r++) {
    for (let j = 0; j < H; j++) hRows[r * H + j] = hRand[(r - (r % 3 === 2 ? 2 : 0)) * H + j]!;
    for (let v = 0; v < V; v++) dzRows[r * V + v] = cancelling(r, (rr) => dzRand[rr * V + v]!);
  }
  // hiddenDa, summed over v: logit v = 2 mod 3 has logit v - 2's W2 column and its negated dz.
  const pCols = p.slice();
  const dzCols = new Float32Array(R * V);
  for (let j = 0; j < H; j++) {
    for (let v = 0; v < V; v++) pCols[P.w2 + j * V + v] = cancelling(v, (vv) => w2[j * V + vv]!, false);
  }
  for (let r = 0; r < R; r++) {
    for (let v = 0; v < V; v++) dzCols[r * V + v] = v % 3 === 2 ? -dzRand[r * V + v - 2]! : dzRand[r * V + v]!;
  }
  return { dims, p, seq, L, rowPos, grammar, hRows, dzRows, pCols, dzCols, dz: dzRand };
}

describe('second layer, blocked: the textbook loops, bit for bit', () => {
  const shapes: Array<[number, number, number]> = [];
  for (const V of [1, 6, 7, 8, 9, 12, 14, 15, 16, 19]) for (const H of [1, 3, 4, 5, 6, 12, 13]) for (const R of [1, 3, 4, 5, 6, 9, 13]) shapes.push([V, H, R]);

  for (const scale of [1, 40, 1e15]) {
    it(`${shapes.length} shapes at scale ${scale}`, () => {
      for (const [V, H, R] of shapes) {
        const f = fixture(V, H, R, scale);
        const at = `V ${V} H ${H} R ${R}`;
        const got = forwardCpu(f.p, f.dims, f.seq, f.L, f.rowPos, f.grammar, 0.7);
        const want = forwardPlain(f.p, f.dims, f.seq, f.L, f.rowPos, f.grammar, 0.7);
        expectSameBits(got.h, want.h, `h, ${at}`);
        expectSameBits(got.z, want.z, `z, ${at}`);
        const size = paramLayout(f.dims).size;
        expectSameBits(headGradCpu(f.dims, R, f.hRows, f.dzRows, new Float32Array(size)), headGradPlain(f.dims, R, f.hRows, f.dzRows), `headGrad, ${at}`);
        expectSameBits(hiddenDaCpu(f.pCols, f.dims, R, f.hRows, f.dzCols), hiddenDaPlain(f.pCols, f.dims, R, f.hRows, f.dzCols), `hiddenDa, ${at}`);
      }
    });
  }

  it('a NaN weight reaches the same outputs, and only those', () => {
    const f = fixture(19, 13, 9, 1);
    const P = paramLayout(f.dims);
    f.p[P.w2 + 2 * 19 + 10] = NaN;
    const got = forwardCpu(f.p, f.dims, f.seq, f.L, f.rowPos, f.grammar, 0.7);
    expectSameBits(got.z, forwardPlain(f.p, f.dims, f.seq, f.L, f.rowPos, f.grammar, 0.7).z, 'z');
    expectSameBits(hiddenDaCpu(f.p, f.dims, 9, got.h, f.dz), hiddenDaPlain(f.p, f.dims, 9, got.h, f.dz), 'hiddenDa');
    // Logit 10 of every row the grammar allows it is NaN; no other logit is.
    for (let r = 0; r < 9; r++) {
      for (let v = 0; v < 19; v++) expect(Number.isNaN(got.z[r * 19 + v]!), `row ${r} logit ${v}`).toBe(v === 10 && got.z[r * 19 + v] !== MASKED_LOGIT);
    }
    // backwardCpu runs the blocked pieces together; its W2 and b2 ranges are headGrad's.
    const g = backwardCpu(f.p, f.dims, f.seq, f.L, f.rowPos, got.h, f.dz);
    const head = headGradPlain(f.dims, 9, got.h, f.dz);
    expectSameBits(g.subarray(P.w2), head.subarray(P.w2), 'backward W2, b2');
  });
});

/** The fixture's rows with `extra` rows of zero gradient (entries +0 and -0) spread between them. */
function withZeroRows(f: ReturnType<typeof fixture>, extra: number, seed: number) {
  const { V, H } = f.dims;
  const R = f.rowPos.length;
  const rng = createRng(seed);
  const isZero = Array.from({ length: R + extra }, (_, i) => i < extra);
  for (let i = isZero.length - 1; i > 0; i--) {
    const k = rng.int(i + 1);
    [isZero[i], isZero[k]] = [isZero[k]!, isZero[i]!];
  }
  const n = isZero.length;
  const h = new Float32Array(n * H);
  const dzRows = new Float32Array(n * V);
  const dzCols = new Float32Array(n * V);
  const rowPos = new Uint32Array(n);
  let src = 0;
  isZero.forEach((zero, r) => {
    if (zero) {
      for (let j = 0; j < H; j++) h[r * H + j] = Math.tanh(rng.normal());
      for (let v = 0; v < V; v++) dzRows[r * V + v] = dzCols[r * V + v] = rng.next() < 0.5 ? -0 : 0;
      rowPos[r] = f.rowPos[rng.int(R)]!;
      return;
    }
    h.set(f.hRows.subarray(src * H, (src + 1) * H), r * H);
    dzRows.set(f.dzRows.subarray(src * V, (src + 1) * V), r * V);
    dzCols.set(f.dzCols.subarray(src * V, (src + 1) * V), r * V);
    rowPos[r] = f.rowPos[src]!;
    src++;
  });
  return { h, dzRows, dzCols, rowPos, isZero, n };
}

describe('rows of zero gradient left out: the textbook loops, bit for bit', () => {
  it('headGrad, hiddenDa and slotGrad with half their rows zero, on 48 shapes', () => {
    for (const V of [1, 7, 9, 19]) for (const H of [1, 5, 6]) for (const R of [1, 4, 6, 9]) {
      const f = fixture(V, H, R, 40);
      const z = withZeroRows(f, R + 3, V + H + R);
      const at = `V ${V} H ${H} R ${R}`;
      const size = paramLayout(f.dims).size;
      expectSameBits(headGradCpu(f.dims, z.n, z.h, z.dzRows, new Float32Array(size)), headGradPlain(f.dims, z.n, z.h, z.dzRows), `headGrad, ${at}`);
      const da = hiddenDaPlain(f.pCols, f.dims, z.n, z.h, z.dzCols);
      expectSameBits(hiddenDaCpu(f.pCols, f.dims, z.n, z.h, z.dzCols), da, `hiddenDa, ${at}`);
      expectSameBits(slotGradCpu(f.dims, f.seq, f.L, z.rowPos, da), slotGradPlain(f.dims, f.seq, f.L, z.rowPos, da), `slotGrad, ${at}`);
    }
  });

  it('non-finite values on a row of zeros reach the outputs as in the plain loops', () => {
    const f = fixture(9, 6, 9, 1);
    const z = withZeroRows(f, 6, 5);
    const zeroRows = z.isZero.flatMap((zero, r) => (zero ? [r] : []));
    const H = 6;
    // h NaN, +Inf and 1.5 (1 - h^2 < 0: da is -0) on three zero rows.
    z.h[zeroRows[0]! * H + 1] = NaN;
    z.h[zeroRows[1]! * H + 4] = Infinity;
    z.h[zeroRows[2]! * H] = 1.5;
    const size = paramLayout(f.dims).size;
    const head = headGradCpu(f.dims, z.n, z.h, z.dzRows, new Float32Array(size));
    expectSameBits(head, headGradPlain(f.dims, z.n, z.h, z.dzRows), 'headGrad');
    expect(head.some((x) => Number.isNaN(x)), 'NaN * 0 in dW2').toBe(true);
    const da = hiddenDaCpu(f.pCols, f.dims, z.n, z.h, z.dzCols);
    expectSameBits(da, hiddenDaPlain(f.pCols, f.dims, z.n, z.h, z.dzCols), 'hiddenDa');
    expect(Object.is(da[zeroRows[2]! * H], -0), 'da = +0 * (1 - 1.5^2) = -0').toBe(true);
    expectSameBits(slotGradCpu(f.dims, f.seq, f.L, z.rowPos, da), slotGradPlain(f.dims, f.seq, f.L, z.rowPos, da), 'slotGrad');
    // An infinite weight turns every zero row's sums into NaN.
    const P = paramLayout(f.dims);
    const pInf = f.pCols.slice();
    pInf[P.w2 + 3] = -Infinity;
    const daInf = hiddenDaCpu(pInf, f.dims, z.n, z.h, z.dzCols);
    expectSameBits(daInf, hiddenDaPlain(pInf, f.dims, z.n, z.h, z.dzCols), 'hiddenDa, an infinite weight');
    expect(Number.isNaN(daInf[zeroRows[3]! * H]!), 'Inf * 0 on a zero row').toBe(true);
  });
});
