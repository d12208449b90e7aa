/**
 * The first layer factored through the vocabulary (embedProjectCpu, slotGradCpu,
 * firstLayerGradCpu in kernels/model/mlp.ts) against the per-row definition it replaces, written out
 * here naively: x[r] = concat(emb[ctx_k(r)]), h = tanh(x W1 + b1), dx = W1 da, dW1 = x^T da,
 * demb scattered from dx. Both sides sum in float64 in different orders, so they agree to float64
 * rounding of sums of ~K*D*H terms of size ~1 (1e-12), and to f32 storage rounding where the
 * result is stored as f32 (h, gradients: 1e-6 relative).
 */
import { describe, expect, it } from 'vitest';
import { backwardCpu, contextToken, embedProjectCpu, firstLayerGradCpu, forwardCpu, givenProjTable, initParams, paramLayout, projTable, safeTanh, slotGradCpu, vocabToken, type MlpDims } from '../../kernels/model/mlp';
import { createRng } from '../../workers/core/rng';
import { expectClose } from '../helpers/expectClose';

const dims: MlpDims = { V: 7, K: 3, D: 4, H: 5 };
const L = 9;

function setup(seed: number, outOfVocab = false) {
  const rng = createRng(seed);
  const p = initParams(dims, rng);
  for (let i = 0; i < p.length; i++) p[i]! += 0.5 * rng.normal();
  const seq = new Int32Array(4 * L);
  for (let i = 0; i < seq.length; i++) seq[i] = 1 + rng.int(dims.V - 1);
  // Tokens past the vocabulary (no task writes one) read as PAD: here in slot 0 of row L + 4 and
  // slots 1 and 2 of rows L + 5 and L + 4.
  if (outOfVocab) {
    seq[L + 1] = dims.V;
    seq[L + 3] = dims.V + 2;
  }
  // Positions 1 and 2 of a sequence reach back before its start (PAD, token 0).
  const rowPos = Uint32Array.from([1, 2, 5, 8, L + 4, L + 5, 2 * L + 1, 3 * L + 6, 3 * L + 8]);
  return { p, seq, rowPos, rng };
}

/** x[r] = concat_k emb[ctx_k(r)], a token past the vocabulary read as PAD (0). */
function inputs(p: Float32Array, seq: Int32Array, rowPos: Uint32Array): Float64Array[] {
  const { V, K, D } = dims;
  const P = paramLayout(dims);
  return Array.from(rowPos, (pos) => {
    const x = new Float64Array(K * D);
    for (let k = 0; k < K; k++) {
      const t = vocabToken(contextToken(seq, pos, L, K, k), V);
      for (let d = 0; d < D; d++) x[k * D + d] = p[P.emb + t * D + d]!;
    }
    return x;
  });
}

describe('factored first layer', () => {
  it.each([false, true])('forward: h equals tanh(x W1 + b1) per row (token past the vocabulary: %s)', (oov) => {
    const { K, D, H } = dims;
    const P = paramLayout(dims);
    const { p, seq, rowPos } = setup(5, oov);
    const grammar = new Uint8Array(dims.V * dims.V).fill(1);
    const { h } = forwardCpu(p, dims, seq, L, rowPos, grammar, 1);
    const xs = inputs(p, seq, rowPos);
    const want = new Float64Array(rowPos.length * H);
    xs.forEach((x, r) => {
      for (let j = 0; j < H; j++) {
        let a = p[P.b1 + j]!;
        for (let i = 0; i < K * D; i++) a += x[i]! * p[P.w1 + i * H + j]!;
        want[r * H + j] = safeTanh(a);
      }
    });
    expectClose(h, want, { atol: 1e-7, rtol: 1e-6 });
  });

  it('embedProject: proj[k, t] is emb[t] times slot k of W1', () => {
    const { V, K, D, H } = dims;
    const P = paramLayout(dims);
    const { p } = setup(6);
    const proj = embedProjectCpu(p, dims);
    expect(proj.length).toBe(K * V * H);
    let worst = 0;
    for (let k = 0; k < K; k++)
      for (let t = 0; t < V; t++)
        for (let j = 0; j < H; j++) {
          let a = 0;
          for (let d = 0; d < D; d++) a += p[P.emb + t * D + d]! * p[P.w1 + (k * D + d) * H + j]!;
          worst = Math.max(worst, Math.abs(a - proj[(k * V + t) * H + j]!));
        }
    expect(worst).toBeLessThan(1e-12);
  });

  it.each([false, true])('the table formed as rows read it: the bits of the whole table, only the entries read, parameters written later not reached (token past the vocabulary: %s)', (oov) => {
    const { V, K, H } = dims;
    const { p, seq, rowPos } = setup(8, oov);
    const grammar = new Uint8Array(V * V).fill(1);
    const whole = forwardCpu(p, dims, seq, L, rowPos, grammar, 0.9, givenProjTable(embedProjectCpu(p, dims), dims));
    const lazy = projTable(p, dims);
    const before = Float32Array.from(p);
    // Written after the table was made: its entries are formed from the parameters as they were.
    for (let i = 0; i < paramLayout(dims).b1; i++) p[i] = 7;
    const got = forwardCpu(before, dims, seq, L, rowPos, grammar, 0.9, lazy);
    expect(Buffer.from(got.h.buffer).equals(Buffer.from(whole.h.buffer))).toBe(true);
    expect(Buffer.from(got.z.buffer).equals(Buffer.from(whole.z.buffer))).toBe(true);
    const read = new Set(Array.from(rowPos, (pos) => Array.from({ length: K }, (_, k) => k * V + vocabToken(contextToken(seq, pos, L, K, k), V))).flat());
    expect(Array.from(lazy.ready, (x, e) => (x === 1) === read.has(e)).every(Boolean)).toBe(true);
    expect(read.size).toBeLessThan(K * V);
    const full = embedProjectCpu(before, dims);
    for (const e of read) expect(Array.from(lazy.proj.subarray(e * H, (e + 1) * H))).toEqual(Array.from(full.subarray(e * H, (e + 1) * H)));
  });

  it.each([false, true])('backward: dW1 = x^T da, db1 = sum da, demb = scatter of W1 da (token past the vocabulary: %s)', (oov) => {
    const { V, K, D, H } = dims;
    const P = paramLayout(dims);
    const { p, seq, rowPos, rng } = setup(7, oov);
    const R = rowPos.length;
    const da = Float32Array.from({ length: R * H }, () => rng.normal());
    const g = firstLayerGradCpu(p, dims, slotGradCpu(dims, seq, L, rowPos, da), new Float32Array(P.size));
    const xs = inputs(p, seq, rowPos);
    const want = new Float64Array(P.size);
    xs.forEach((x, r) => {
      for (let j = 0; j < H; j++) {
        for (let i = 0; i < K * D; i++) want[P.w1 + i * H + j]! += x[i]! * da[r * H + j]!;
        want[P.b1 + j]! += da[r * H + j]!;
      }
      for (let k = 0; k < K; k++) {
        const t = vocabToken(contextToken(seq, rowPos[r]!, L, K, k), V);
        for (let d = 0; d < D; d++) {
          let dx = 0;
          for (let j = 0; j < H; j++) dx += p[P.w1 + (k * D + d) * H + j]! * da[r * H + j]!;
          want[P.emb + t * D + d]! += dx;
        }
      }
    });
    const range = P.b1 + H;
    expectClose(g.subarray(0, range), want.subarray(0, range), { atol: 1e-6, rtol: 1e-6 });
    // W2 and b2 are headGrad's: untouched here.
    expect(g.subarray(range).every((x) => x === 0)).toBe(true);
  });

  it('an empty row set gives zero first-layer gradients', () => {
    const { p, seq } = setup(8);
    const g = backwardCpu(p, dims, seq, L, new Uint32Array(0), new Float32Array(0), new Float32Array(0));
    expect(g.every((x) => x === 0)).toBe(true);
  });
});
