/**
 * The CPU backend's backward pass: kernels/model/mlp.ts's backwardCpu, with its four loops run as
 * WebAssembly (backwardKernels.ts) where the engine has WebAssembly SIMD, and as backwardCpu
 * itself where it has not. Both give the same bits (tests/unit/backwardWasm.test.ts), so a run
 * does not depend on which one ran.
 *
 * Why: on a lesson step's seeds the backward's loops were about a quarter of the CPU profile, and
 * each trainer worker's optimizing compiler compiled them again before they ran fast (docs/LESSONS.md,
 * "Ready time"). The module is compiled at once by the engine's baseline compiler, and once warm a
 * backward takes a fifth to a third of the TypeScript's time (BENCHMARKS.md).
 *
 * The arrays are copied into the module's memory for each call: the copies are O(R (H + V)) against
 * O(R H V) arithmetic (engine.ts has the module and its memory).
 */
import { backwardCpu, paramLayout, PROGRESS_ROWS, type MlpDims } from '../mlp';
import { engineFor } from './engine';

/** Byte offsets of a call's arrays in the module's memory, each 16-aligned. */
function layout(dims: MlpDims, R: number, size: number, seqLength: number) {
  const { V, K, D, H } = dims;
  let at = 0;
  const take = (bytes: number) => {
    const o = at;
    at += Math.ceil(bytes / 16) * 16;
    return o;
  };
  const o = {
    params: take(4 * size),
    h: take(4 * R * H),
    dz: take(4 * R * V),
    seq: take(4 * seqLength),
    rowPos: take(4 * R),
    live: take(4 * R),
    w2: take(8 * H * V),
    b2: take(8 * V),
    w2T: take(8 * V * H),
    da: take(4 * R * H),
    G: take(8 * K * V * H),
    w1T: take(8 * K * D * H),
    blockLive: take(K * V),
    tokens: take(4 * K * V),
    counts: take(4 * K),
    out: take(4 * size),
  };
  return { ...o, bytes: at };
}

/**
 * backwardCpu's result, the same bits, and its arguments: the flat parameter gradient for
 * R = rowPos.length rows with hidden activations h [R, H] and logit gradients dz [R, V].
 */
export const mlpBackward: typeof backwardCpu = (params, dims, seq, L, rowPos, h, dz, progress) => {
  const R = rowPos.length;
  const P = paramLayout(dims);
  const o = layout(dims, R, P.size, seq.length);
  const e = engineFor(o.bytes);
  if (!e) return backwardCpu(params, dims, seq, L, rowPos, h, dz, progress);
  const { V, K, D, H } = dims;
  const { fns } = e;
  const buf = e.memory.buffer;
  new Float32Array(buf, o.params, P.size).set(params);
  new Float32Array(buf, o.h, R * H).set(h);
  new Float32Array(buf, o.dz, R * V).set(dz);
  new Int32Array(buf, o.seq, seq.length).set(seq);
  new Int32Array(buf, o.rowPos, R).set(rowPos);
  // Progress after every full PROGRESS_ROWS rows of a loop, as backwardCpu tells it.
  const chunks = (n: number, run: (i0: number, i1: number) => void) => {
    for (let i = 0; i < n; i += PROGRESS_ROWS) {
      run(i, Math.min(n, i + PROGRESS_ROWS));
      if (i + PROGRESS_ROWS <= n) progress?.();
    }
  };

  // Output layer, over the rows that add anything.
  const live = fns.liveRows(o.dz, V, o.h, H, R, o.live);
  new Float64Array(buf, o.w2, H * V).fill(0);
  new Float64Array(buf, o.b2, V).fill(0);
  chunks(live, (i0, i1) => fns.headGrad(o.live + 4 * i0, i1 - i0, o.h, o.dz, o.w2, o.b2, H, V));
  // Back through W2 and tanh, then gathered by context slot and token.
  fns.transpose(o.params + 4 * P.w2, H, V, o.w2T);
  const w2Finite = fns.nonFinite(o.params + 4 * P.w2, H * V) === 0;
  chunks(R, (r0, r1) => fns.hiddenDa(r0, r1, o.h, o.dz, o.w2T, o.da, H, V, w2Finite ? 1 : 0));
  new Float64Array(buf, o.G, K * V * H).fill(0);
  chunks(R, (r0, r1) => fns.slotGrad(r0, r1, o.seq, o.rowPos, L, K, V, o.da, o.G, H));
  // First layer, from the slot sums.
  fns.transpose(o.params + 4 * P.w1, K * D, H, o.w1T);
  const w1Finite = fns.nonFinite(o.params + 4 * P.w1, K * D * H) === 0;
  const embFinite = fns.nonFinite(o.params + 4 * P.emb, V * D) === 0;
  fns.blocks(o.G, w1Finite ? 1 : 0, embFinite ? 1 : 0, o.blockLive, o.tokens, o.counts, V, K, H);
  fns.embGrad(o.G, o.w1T, o.blockLive, o.out, V, K, D, H);
  fns.w1Grad(o.G, o.params, o.tokens, o.counts, o.out, V, K, D, H);
  fns.b1Grad(o.G, V, H, o.out + 4 * P.b1);

  const g = new Float32Array(P.size);
  g.set(new Float32Array(buf, o.out, P.w2));
  g.set(new Float64Array(buf, o.w2, H * V), P.w2);
  g.set(new Float64Array(buf, o.b2, V), P.b2);
  return g;
};
