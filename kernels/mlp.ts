/**
 * The policy: a "makemore MLP" over the last K tokens (Bengio et al. 2003; Karpathy's makemore).
 *   x = concat(emb[ctx_0], ..., emb[ctx_{K-1}])        [K*D]
 *   h = tanh(x W1 + b1)                                  [H]
 *   z = grammarMask((h W2 + b2) / temperature)           [V]
 * All parameters live in one flat f32 buffer so that Adam, the gradient norm and snapshots are one
 * elementwise pass:  emb [V, D] | W1 [K*D, H] | b1 [H] | W2 [H, V] | b2 [V]   (all row-major)
 *
 * This module holds the CPU reference of the forward and backward passes; the WGSL versions live in
 * the kernels named in each function's doc and are checked against these. The same functions are
 * the CPU backend, so they are written for speed where that changes no bit: sums blocked in
 * registers, each distinct row computed once, rows of zero gradient left out.
 * tests/helpers/mlpPlain.ts has the textbook loops they are checked against, bit for bit.
 */
import type { Rng } from '../workers/rng';
import { nonFiniteCpu } from './finiteCheck';
import embedProjectWGSL from './embedProject.wgsl?raw';
import firstLayerGradIoWGSL from './firstLayerGradIo.wgsl?raw';
import firstLayerGradWGSL from './firstLayerGrad.wgsl?raw';
import firstLayerGradTermsWGSL from './firstLayerGradTerms.wgsl?raw';
import firstLayerGradSubgroupWGSL from './firstLayerGradSubgroup.wgsl?raw';
import forwardHiddenWGSL from './forwardHidden.wgsl?raw';
import forwardLogitsWGSL from './forwardLogits.wgsl?raw';
import headGradWGSL from './headGrad.wgsl?raw';
import hiddenGradWGSL from './hiddenGrad.wgsl?raw';
import logitGradIoWGSL from './logitGradIo.wgsl?raw';
import logitGradWGSL from './logitGrad.wgsl?raw';
import logitGradSubgroupWGSL from './logitGradSubgroup.wgsl?raw';
import { subgroupLanesWGSL, subgroupRowSource, subgroupRowWorkgroups, SUBGROUP_WORKGROUP_SIZE } from './rowSubgroup';
import type { KernelVariant } from './variant';
import rowSoftmaxWGSL from './rowSoftmax.wgsl?raw';
import slotGradWGSL from './slotGrad.wgsl?raw';
import { defineKernel, uniformLayout, type BufferArg, type DefinedKernel } from './pipeline';
import { defineStages } from './stages';
import { defineReduction, rowChunks } from './reduce';

export interface MlpDims {
  /** Vocabulary size. */
  V: number;
  /** Context tokens. */
  K: number;
  /** Embedding width. */
  D: number;
  /** Hidden width. */
  H: number;
}

export interface ParamLayout {
  emb: number;
  w1: number;
  b1: number;
  w2: number;
  b2: number;
  /** Total parameter count. */
  size: number;
}

/** W1 and b1 are adjacent, as are W2 and b2: the backward reductions write each pair as one range. */
export function paramLayout({ V, K, D, H }: MlpDims): ParamLayout {
  const emb = 0;
  const w1 = emb + V * D;
  const b1 = w1 + K * D * H;
  const w2 = b1 + H;
  const b2 = w2 + H * V;
  return { emb, w1, b1, w2, b2, size: b2 + V };
}

/**
 * Logit of a token the grammar forbids: exp() of it underflows to exactly 0, and 2z stays finite in f32.
 * Rounded to f32 so that `z[i] === MASKED_LOGIT` holds for values read back from a Float32Array
 * (-1e30 itself is not an f32); bit for bit the WGSL constant in common.wgsl (0xf149f2ca).
 */
export const MASKED_LOGIT = Math.fround(-1e30);

/** Seeded init: N(0, 1) embeddings, scaled-normal W1 (tanh gain), small W2 so the start is near uniform. */
export function initParams(dims: MlpDims, rng: Rng): Float32Array {
  const L = paramLayout(dims);
  const p = new Float32Array(L.size);
  for (let i = 0; i < dims.V * dims.D; i++) p[L.emb + i] = rng.normal();
  const s1 = (5 / 3) / Math.sqrt(dims.K * dims.D);
  for (let i = 0; i < dims.K * dims.D * dims.H; i++) p[L.w1 + i] = rng.normal() * s1;
  const s2 = 0.01;
  for (let i = 0; i < dims.H * dims.V; i++) p[L.w2 + i] = rng.normal() * s2;
  return p;
}

/** tanh written so that no exp overflows: the same formula as in WGSL. */
export function safeTanh(x: number): number {
  const c = Math.min(Math.max(x, -15), 15);
  return 1 - 2 / (Math.exp(2 * c) + 1);
}

/** Context token k (0 = oldest) of the row that predicts flat position `pos` of a [N, L] sequence. */
export function contextToken(seq: ArrayLike<number>, pos: number, L: number, K: number, k: number): number {
  const p = pos % L;
  const q = p - K + k;
  return q < 0 ? 0 : seq[pos - K + k]!;
}

/** A token id as the first layer reads it: PAD (0) for anything outside the vocabulary. */
export function vocabToken(t: number, V: number): number {
  return t < V ? t : 0;
}

export interface ForwardOut {
  /** [R, H] hidden activations. */
  h: Float32Array;
  /** [R, V] temperature-scaled, grammar-masked logits. */
  z: Float32Array;
  /**
   * [R] the first row of the call with row r's tokens (r itself, or an earlier row whose h and z
   * row r copied): per-row statistics of z need computing only once per distinct row.
   */
  firstOf: Int32Array;
}

/**
 * The first layer factored through the vocabulary (kernel `embedProject.wgsl`). Context slot k of
 * every row holds one of V tokens, so its share of x W1 is one of V vectors, formed once per
 * parameter set instead of once per row:
 *   proj[k, t, j] = sum_d emb[t, d] W1[k*D + d, j]          [K, V, H]
 * V*K*D*H multiply-adds per parameter set against R*K*D*H per pass over R rows; V is 19-80 in the
 * tasks and R is a batch of rows (128 per rollout slot, 1152 per update at the defaults).
 */
export function embedProjectCpu(params: Float32Array, dims: MlpDims): Float64Array {
  const { V, K, D, H } = dims;
  const P = paramLayout(dims);
  const proj = new Float64Array(K * V * H);
  for (let k = 0; k < K; k++) {
    for (let t = 0; t < V; t++) {
      const out = (k * V + t) * H;
      for (let d = 0; d < D; d++) {
        const x = params[P.emb + t * D + d]!;
        const row = P.w1 + (k * D + d) * H;
        for (let j = 0; j < H; j++) proj[out + j]! += x * params[row + j]!;
      }
    }
  }
  return proj;
}

/**
 * Called every PROGRESS_ROWS rows by the long CPU loops below: they run for tens of seconds at the
 * largest settings without yielding, and this is how the worker tells the page it is not hung
 * (workers/cpuBackend.ts). It must not touch the loops' data.
 */
export type Progress = () => void;
const PROGRESS_ROWS = 1024;

/**
 * Forward pass for R rows (kernels `forwardHidden.wgsl`, then `forwardLogits.wgsl`). Row r
 * predicts the token at flat position rowPos[r] of `seq` ([N, L] row-major); its grammar row is
 * the previous token:
 *   h[r, j] = tanh(b1[j] + sum_k proj[k, ctx_k(r), j]),   z[r] = grammarMask((h[r] W2 + b2) / temperature)
 * with `proj` from embedProjectCpu (computed here unless given). A context token outside the
 * vocabulary (no task writes one) reads as PAD (token 0), here and in every kernel, so that every
 * row has exactly one token in every slot.
 *
 * A row's h and z depend only on its context tokens and the previous token, and rows repeat them
 * often (a group's rollouts share a prompt; a policy that has settled writes the same tokens): 19-47 %
 * of the rows of the default tasks' forward calls are distinct, under 1 % on the `scale` preset. A
 * row seen before in the call gets the earlier row's h and z copied, the same bits it would compute.
 */
export function forwardCpu(
  params: Float32Array,
  dims: MlpDims,
  seq: Int32Array | Uint32Array,
  L: number,
  rowPos: Uint32Array,
  grammar: Uint8Array,
  temperature: number,
  proj: Float64Array = embedProjectCpu(params, dims),
  progress?: Progress,
): ForwardOut {
  const { V, K, H } = dims;
  const P = paramLayout(dims);
  const R = rowPos.length;
  const h = new Float32Array(R * H);
  const z = new Float32Array(R * V);
  const hid = new Float64Array(H);
  const w2 = Float64Array.from(params.subarray(P.w2, P.w2 + H * V));
  const out = new Float64Array(V);
  const ctx = new Int32Array(K + 1);
  // Context hash -> the first row with that hash; a hit is compared token by token (sameContext).
  const firstRow = new Map<number, number>();
  const firstOf = new Int32Array(R);
  for (let r = 0; r < R; r++) {
    if (r % PROGRESS_ROWS === PROGRESS_ROWS - 1) progress?.();
    firstOf[r] = r;
    const pos = rowPos[r]!;
    const key = rowContext(seq, pos, L, K, V, ctx);
    const seen = firstRow.get(key);
    if (seen !== undefined && sameContext(seq, rowPos[seen]!, L, K, V, ctx)) {
      h.copyWithin(r * H, seen * H, (seen + 1) * H);
      z.copyWithin(r * V, seen * V, (seen + 1) * V);
      firstOf[r] = seen;
      continue;
    }
    if (seen === undefined) firstRow.set(key, r);
    for (let j = 0; j < H; j++) hid[j] = params[P.b1 + j]!;
    for (let k = 0; k < K; k++) {
      const row = (k * V + ctx[k]!) * H;
      for (let j = 0; j < H; j++) hid[j]! += proj[row + j]!;
    }
    for (let j = 0; j < H; j++) h[r * H + j] = safeTanh(hid[j]!);
    logitsRow(h, r * H, w2, params, P.b2, H, V, out);
    const allowed = seq[pos - 1]! * V;
    for (let v = 0; v < V; v++) z[r * V + v] = grammar[allowed + v] ? out[v]! / temperature : MASKED_LOGIT;
  }
  return { h, z, firstOf };
}

/**
 * Everything a forward row depends on, into ctx: its K context tokens as the first layer reads
 * them (vocabToken), then the previous token (the grammar row). Returns a 32-bit hash of them.
 */
export function rowContext(seq: ArrayLike<number>, pos: number, L: number, K: number, V: number, ctx: Int32Array): number {
  let x = 0x811c9dc5;
  for (let k = 0; k < K; k++) {
    const t = vocabToken(contextToken(seq, pos, L, K, k), V);
    ctx[k] = t;
    x = Math.imul(x ^ t, 0x01000193);
  }
  const prev = seq[pos - 1]!;
  ctx[K] = prev;
  x = Math.imul(x ^ prev, 0x01000193);
  return x ^ (x >>> 15);
}

/** Whether the row at `pos` has exactly the tokens in ctx (rowContext's layout). */
function sameContext(seq: ArrayLike<number>, pos: number, L: number, K: number, V: number, ctx: Int32Array): boolean {
  for (let k = 0; k < K; k++) if (vocabToken(contextToken(seq, pos, L, K, k), V) !== ctx[k]) return false;
  return seq[pos - 1] === ctx[K];
}

/**
 * out[v] = b2[v] + sum_j h[hr + j] W2[j, v], each sum in j order as a plain loop would add it (the
 * same bits), eight logits at a time: their sums stay in registers while W2's rows are read
 * along, 1.4-2.5x faster than a loop over W2's columns (BENCHMARKS.md, the CPU backend's layers).
 */
function logitsRow(h: Float32Array, hr: number, w2: Float64Array, params: Float32Array, b2: number, H: number, V: number, out: Float64Array): void {
  let v = 0;
  for (; v + 7 < V; v += 8) {
    const b = b2 + v;
    let a0 = params[b]!, a1 = params[b + 1]!, a2 = params[b + 2]!, a3 = params[b + 3]!;
    let a4 = params[b + 4]!, a5 = params[b + 5]!, a6 = params[b + 6]!, a7 = params[b + 7]!;
    for (let j = 0; j < H; j++) {
      const hj = h[hr + j]!;
      const w = j * V + v;
      a0 += hj * w2[w]!;
      a1 += hj * w2[w + 1]!;
      a2 += hj * w2[w + 2]!;
      a3 += hj * w2[w + 3]!;
      a4 += hj * w2[w + 4]!;
      a5 += hj * w2[w + 5]!;
      a6 += hj * w2[w + 6]!;
      a7 += hj * w2[w + 7]!;
    }
    out[v] = a0;
    out[v + 1] = a1;
    out[v + 2] = a2;
    out[v + 3] = a3;
    out[v + 4] = a4;
    out[v + 5] = a5;
    out[v + 6] = a6;
    out[v + 7] = a7;
  }
  for (; v < V; v++) {
    let a = params[b2 + v]!;
    for (let j = 0; j < H; j++) a += h[hr + j]! * w2[j * V + v]!;
    out[v] = a;
  }
}

/** Log-sum-exp of one row: m + log sum exp(z - m). Masked logits contribute exactly 0. */
export function rowLse(z: Float32Array, off: number, V: number): number {
  let m = -Infinity;
  for (let v = 0; v < V; v++) m = Math.max(m, z[off + v]!);
  let s = 0;
  for (let v = 0; v < V; v++) s += Math.exp(z[off + v]! - m);
  return m + Math.log(s);
}

/**
 * Gradient of the loss w.r.t. the raw logits (kernel `logitGrad.wgsl`):
 *   dz_raw[r, v] = g_r * (onehot(a_r)_v - pi_v) / temperature,   g_r = dLoss/dlogp_r.
 * Forbidden tokens have pi_v = 0 and are never the sampled token, so their gradient is 0.
 */
export function logitGradCpu(
  z: Float32Array,
  V: number,
  seq: Int32Array | Uint32Array,
  rowPos: Uint32Array,
  dlogp: Float32Array,
  temperature: number,
): Float32Array {
  const R = rowPos.length;
  const dz = new Float32Array(R * V);
  for (let r = 0; r < R; r++) {
    const g = dlogp[r]!;
    if (g === 0) continue;
    const lse = rowLse(z, r * V, V);
    const a = seq[rowPos[r]!]!;
    for (let v = 0; v < V; v++) {
      const p = z[r * V + v] === MASKED_LOGIT ? 0 : Math.exp(z[r * V + v]! - lse);
      dz[r * V + v] = (g * ((v === a ? 1 : 0) - p)) / temperature;
    }
  }
  return dz;
}

/**
 * The rows of an [R, V] gradient dz that add anything to a sum of x * dz terms (x the row's H
 * values), in order. A row whose dz entries are all zero (masked, or a zero advantage) adds only
 * zeros when its x are finite, and a float64 sum that starts at +0 is never -0, so adding a zero
 * leaves it as it was: leaving such rows out gives the same bits. A row with a non-finite x stays
 * (NaN * 0 is NaN).
 */
function liveRows(R: number, dz: Float32Array, V: number, x: Float32Array, H: number): Int32Array {
  const live = new Int32Array(R);
  let n = 0;
  for (let r = 0; r < R; r++) {
    if (!zeroRow(dz, r * V, V) || nonFiniteCpu(x, 1, r * H, (r + 1) * H)) live[n++] = r;
  }
  return live.subarray(0, n);
}

function zeroRow(a: Float32Array, off: number, n: number): boolean {
  for (let i = off; i < off + n; i++) if (a[i] !== 0) return false;
  return true;
}

/**
 * Output-layer gradients (kernel `headGrad.wgsl`), written into the flat gradient `g`:
 *   dW2[j, v] = sum_r h[r, j] dz[r, v],  db2[v] = sum_r dz[r, v]   (R rows, summed in row order).
 */
export function headGradCpu(dims: MlpDims, R: number, h: Float32Array, dz: Float32Array, g: Float32Array, progress?: Progress): Float32Array {
  const { V, H } = dims;
  const P = paramLayout(dims);
  // Rows outer, float64 accumulators: every output still sums its terms in row order. Four rows
  // at a time, so each accumulator is loaded and stored once per four terms (2-2.5x faster). Rows
  // whose terms are all zero are left out (see liveRows): 50-100 % of the rows in the default tasks.
  const live = liveRows(R, dz, V, h, H);
  const n = live.length;
  const w2 = new Float64Array(H * V);
  const b2 = new Float64Array(V);
  let i = 0;
  for (; i + 3 < n; i += 4) {
    if (i % PROGRESS_ROWS === PROGRESS_ROWS - 4) progress?.();
    const r0 = live[i]!;
    const r1 = live[i + 1]!;
    const r2 = live[i + 2]!;
    const r3 = live[i + 3]!;
    const d0 = r0 * V;
    const d1 = r1 * V;
    const d2 = r2 * V;
    const d3 = r3 * V;
    for (let j = 0; j < H; j++) {
      const h0 = h[r0 * H + j]!;
      const h1 = h[r1 * H + j]!;
      const h2 = h[r2 * H + j]!;
      const h3 = h[r3 * H + j]!;
      for (let v = 0; v < V; v++) {
        let w = w2[j * V + v]!;
        w += h0 * dz[d0 + v]!;
        w += h1 * dz[d1 + v]!;
        w += h2 * dz[d2 + v]!;
        w += h3 * dz[d3 + v]!;
        w2[j * V + v] = w;
      }
    }
    for (let v = 0; v < V; v++) {
      let b = b2[v]!;
      b += dz[d0 + v]!;
      b += dz[d1 + v]!;
      b += dz[d2 + v]!;
      b += dz[d3 + v]!;
      b2[v] = b;
    }
  }
  for (; i < n; i++) {
    const r = live[i]!;
    for (let j = 0; j < H; j++) {
      const hj = h[r * H + j]!;
      for (let v = 0; v < V; v++) w2[j * V + v]! += hj * dz[r * V + v]!;
    }
    for (let v = 0; v < V; v++) b2[v]! += dz[r * V + v]!;
  }
  g.set(w2, P.w2);
  g.set(b2, P.b2);
  return g;
}

/**
 * Back through W2 and tanh (kernel `hiddenGrad.wgsl`):
 *   da[r, j] = (1 - h[r, j]^2) sum_v W2[j, v] dz[r, v]      [R, H]
 * Nothing goes further back per row: slotGradCpu gathers da by context slot and token.
 */
export function hiddenDaCpu(params: Float32Array, dims: MlpDims, R: number, h: Float32Array, dz: Float32Array, progress?: Progress): Float32Array {
  const { V, H } = dims;
  const P = paramLayout(dims);
  const w2 = Float64Array.from(params.subarray(P.w2, P.w2 + H * V));
  const w2Finite = !nonFiniteCpu(w2);
  const da = new Float32Array(R * H);
  for (let r = 0; r < R; r++) {
    if (r % PROGRESS_ROWS === PROGRESS_ROWS - 1) progress?.();
    const d = r * V;
    if (w2Finite && zeroRow(dz, d, V)) {
      // Every sum is +0 (finite weights times zeros, from +0), so only the tanh factor is left.
      for (let j = 0; j < H; j++) da[r * H + j] = 0 * (1 - h[r * H + j]! * h[r * H + j]!);
      continue;
    }
    // Four hidden units at a time share each dz load; every sum still runs over v in order.
    let j = 0;
    for (; j + 3 < H; j += 4) {
      const w = j * V;
      let a0 = 0;
      let a1 = 0;
      let a2 = 0;
      let a3 = 0;
      for (let v = 0; v < V; v++) {
        const x = dz[d + v]!;
        a0 += w2[w + v]! * x;
        a1 += w2[w + V + v]! * x;
        a2 += w2[w + 2 * V + v]! * x;
        a3 += w2[w + 3 * V + v]! * x;
      }
      const o = r * H + j;
      const h0 = h[o]!;
      const h1 = h[o + 1]!;
      const h2 = h[o + 2]!;
      const h3 = h[o + 3]!;
      da[o] = a0 * (1 - h0 * h0);
      da[o + 1] = a1 * (1 - h1 * h1);
      da[o + 2] = a2 * (1 - h2 * h2);
      da[o + 3] = a3 * (1 - h3 * h3);
    }
    for (; j < H; j++) {
      let acc = 0;
      for (let v = 0; v < V; v++) acc += w2[j * V + v]! * dz[d + v]!;
      const hj = h[r * H + j]!;
      da[r * H + j] = acc * (1 - hj * hj);
    }
  }
  return da;
}

/**
 * Row gradients gathered by context slot and token (kernel `slotGrad.wgsl`), the transpose of the
 * factored first layer:  G[k, t, j] = sum_r [ctx_k(r) = t] da[r, j]      [K, V, H]
 * summed in row order. R*K*H adds; every later first-layer gradient needs only G, never the rows.
 */
export function slotGradCpu(
  dims: MlpDims,
  seq: Int32Array | Uint32Array,
  L: number,
  rowPos: Uint32Array,
  da: Float32Array,
  progress?: Progress,
): Float64Array {
  const { V, K, H } = dims;
  const R = rowPos.length;
  const G = new Float64Array(K * V * H);
  for (let r = 0; r < R; r++) {
    if (r % PROGRESS_ROWS === PROGRESS_ROWS - 1) progress?.();
    // G starts at +0 and is never -0, so a row of zeros changes nothing (liveRows).
    if (zeroRow(da, r * H, H)) continue;
    for (let k = 0; k < K; k++) {
      const t = vocabToken(contextToken(seq, rowPos[r]!, L, K, k), V);
      const out = (k * V + t) * H;
      for (let j = 0; j < H; j++) G[out + j]! += da[r * H + j]!;
    }
  }
  return G;
}

/**
 * Embedding and first-layer gradients from the slot sums G (kernel `firstLayerGrad.wgsl`),
 * written into the flat gradient `g` (the emb, W1 and b1 ranges, which are adjacent):
 *   demb[t, d]     = sum_k sum_j W1[k*D + d, j] G[k, t, j]
 *   dW1[k*D + d, j] = sum_t emb[t, d] G[k, t, j]
 *   db1[j]         = sum_t G[0, t, j]   (every row has exactly one token in slot 0: this is sum_r da[r, j])
 * V*K*D*H multiply-adds each for demb and dW1, against R*K*D*H each for the per-row dx = W1 da
 * and the per-row x^T da they replace.
 */
export function firstLayerGradCpu(params: Float32Array, dims: MlpDims, G: Float64Array, g: Float32Array): Float32Array {
  const { V, K, D, H } = dims;
  const P = paramLayout(dims);
  for (let t = 0; t < V; t++) {
    for (let d = 0; d < D; d++) {
      let acc = 0;
      for (let k = 0; k < K; k++) {
        const w = P.w1 + (k * D + d) * H;
        const s = (k * V + t) * H;
        for (let j = 0; j < H; j++) acc += params[w + j]! * G[s + j]!;
      }
      g[P.emb + t * D + d] = acc;
    }
  }
  const w1 = new Float64Array(H);
  for (let k = 0; k < K; k++) {
    for (let d = 0; d < D; d++) {
      w1.fill(0);
      // Tokens outer so G is read along its rows; each weight still sums over t in order.
      for (let t = 0; t < V; t++) {
        const x = params[P.emb + t * D + d]!;
        const s = (k * V + t) * H;
        for (let j = 0; j < H; j++) w1[j]! += x * G[s + j]!;
      }
      g.set(w1, P.w1 + (k * D + d) * H);
    }
  }
  for (let j = 0; j < H; j++) {
    let acc = 0;
    for (let t = 0; t < V; t++) acc += G[t * H + j]!;
    g[P.b1 + j] = acc;
  }
  return g;
}

/**
 * Backward pass of the MLP from logit gradients to the flat parameter gradient: headGrad,
 * hiddenDa, slotGrad and firstLayerGrad in turn (each piece's kernel is named in its doc). Sums
 * here are float64; the GPU kernels sum in f32 over fixed row chunks, then the chunks in order
 * (kernels/reduce.ts), so their results are the same bits on every run and within f32 rounding of
 * these.
 */
export function backwardCpu(
  params: Float32Array,
  dims: MlpDims,
  seq: Int32Array | Uint32Array,
  L: number,
  rowPos: Uint32Array,
  h: Float32Array,
  dz: Float32Array,
  progress?: Progress,
): Float32Array {
  const R = rowPos.length;
  const g = new Float32Array(paramLayout(dims).size);
  headGradCpu(dims, R, h, dz, g, progress);
  const da = hiddenDaCpu(params, dims, R, h, dz, progress);
  firstLayerGradCpu(params, dims, slotGradCpu(dims, seq, L, rowPos, da, progress), g);
  return g;
}

// ---------------------------------------------------------------------------------------------
// GPU kernels. Row-indexed arrays (h, z, dz, da) use the row's index in the whole row set: row r
// of a call is rowBase + r, so minibatches share buffers with the full batch.

/** Threads per workgroup of the per-output kernels. */
export const MLP_WORKGROUP_SIZE = 64;
/** The largest model the kernels are tested at (workers/config.ts allows no more). */
export const MAX_HIDDEN = 1024;
export const MAX_CONTEXT = 32;

function checkDims(label: string, d: MlpDims): void {
  if (d.H > MAX_HIDDEN) throw new Error(`${label}: hidden ${d.H} exceeds ${MAX_HIDDEN}`);
  if (d.K > MAX_CONTEXT) throw new Error(`${label}: context ${d.K} exceeds ${MAX_CONTEXT}`);
}

const perThread = (n: number) => Math.ceil(n / MLP_WORKGROUP_SIZE);

/** Words of the factored first layer's tables: proj (embedProject) and the slot sums G (slotGrad), both [K, V, H]. */
export const slotTableWords = ({ V, K, H }: MlpDims) => K * V * H;

/** Mirrors `struct EmbedProject` in embedProject.wgsl. */
export const EMBED_PROJECT_UNIFORM = uniformLayout([
  ['vocab', 'u32'], ['context', 'u32'], ['embed', 'u32'], ['hidden', 'u32'], ['embOff', 'u32'], ['w1Off', 'u32'],
] as const);

/**
 * embedProjectCpu on the GPU: buffers params, proj (output, `slotTableWords(dims)` words). Run it
 * whenever the parameters the next forward reads are not the ones the table was made from.
 */
export const embedProjectKernel = defineKernel({
  label: 'embedProject',
  wgsl: embedProjectWGSL,
  workgroupSize: MLP_WORKGROUP_SIZE,
  bindings: ['params', 'proj'],
  uniform: EMBED_PROJECT_UNIFORM,
  values: (c: { dims: MlpDims }) => {
    const P = paramLayout(c.dims);
    return { vocab: c.dims.V, context: c.dims.K, embed: c.dims.D, hidden: c.dims.H, embOff: P.emb, w1Off: P.w1 };
  },
  workgroups: (c) => perThread(slotTableWords(c.dims)),
});
export const createEmbedProjectKernel = (device: GPUDevice) => embedProjectKernel.create(device);

export interface ForwardConfig {
  dims: MlpDims;
  /** L: tokens per trajectory sequence. */
  seqLen: number;
  numRows: number;
  /** First entry of rowPos to read (default 0). */
  rowBase?: number;
  /** First row of h and z to write (default rowBase). */
  outBase?: number;
  temperature: number;
}

/** Mirrors `struct ForwardHidden` in forwardHidden.wgsl. */
export const FORWARD_HIDDEN_UNIFORM = uniformLayout([
  ['numRows', 'u32'], ['rowBase', 'u32'], ['outBase', 'u32'], ['seqLen', 'u32'],
  ['vocab', 'u32'], ['context', 'u32'], ['hidden', 'u32'], ['b1Off', 'u32'],
] as const);

/** Mirrors `struct ForwardLogits` in forwardLogits.wgsl. */
export const FORWARD_LOGITS_UNIFORM = uniformLayout([
  ['numRows', 'u32'], ['rowBase', 'u32'], ['outBase', 'u32'], ['seqLen', 'u32'],
  ['vocab', 'u32'], ['hidden', 'u32'], ['w2Off', 'u32'], ['b2Off', 'u32'], ['temperature', 'f32'],
] as const);

const forwardRows = (c: ForwardConfig) => {
  const rowBase = c.rowBase ?? 0;
  return { numRows: c.numRows, rowBase, outBase: c.outBase ?? rowBase, seqLen: c.seqLen };
};

/** Stage 1 of the forward: h from the table; buffers params, proj, seq, rowPos, h (output). */
export const forwardHiddenKernel = defineKernel({
  label: 'forwardHidden',
  wgsl: forwardHiddenWGSL,
  workgroupSize: MLP_WORKGROUP_SIZE,
  bindings: ['params', 'proj', 'seq', 'rowPos', 'h'],
  uniform: FORWARD_HIDDEN_UNIFORM,
  check: (c: ForwardConfig) => checkDims('forward', c.dims),
  values: (c: ForwardConfig) => ({
    ...forwardRows(c), vocab: c.dims.V, context: c.dims.K, hidden: c.dims.H, b1Off: paramLayout(c.dims).b1,
  }),
  workgroups: (c: ForwardConfig) => perThread(c.numRows * c.dims.H),
});

/** Stage 2 of the forward: z from h; buffers params, seq, rowPos, grammar (u32 0/1), h, z (output). */
export const forwardLogitsKernel = defineKernel({
  label: 'forwardLogits',
  wgsl: forwardLogitsWGSL,
  workgroupSize: MLP_WORKGROUP_SIZE,
  bindings: ['params', 'seq', 'rowPos', 'grammar', 'h', 'z'],
  uniform: FORWARD_LOGITS_UNIFORM,
  values: (c: ForwardConfig) => {
    const P = paramLayout(c.dims);
    return { ...forwardRows(c), vocab: c.dims.V, hidden: c.dims.H, w2Off: P.w2, b2Off: P.b2, temperature: c.temperature };
  },
  workgroups: (c: ForwardConfig) => perThread(c.numRows * c.dims.V),
});

/**
 * forwardCpu on the GPU, two dispatches (hidden units, then logits; kernels/stages.ts): buffers
 * params, proj (embedProject's table of the same params), seq (u32), rowPos, grammar (u32 0/1),
 * h and z (outputs). Two thread-per-output stages instead of one workgroup per row: no barriers or
 * workgroup memory, and R*H then R*V threads in flight.
 */
export const forwardKernel = defineStages<Record<'params' | 'proj' | 'seq' | 'rowPos' | 'grammar' | 'h' | 'z', BufferArg>, ForwardConfig>(
  'forward',
  [forwardHiddenKernel, forwardLogitsKernel],
);
export const createForwardKernel = (device: GPUDevice) => forwardKernel.create(device);

export interface RowsConfig {
  numRows: number;
  /** First row (default 0): row r of the call is rowBase + r everywhere. */
  rowBase?: number;
}

/** Mirrors `struct LogitGrad` in logitGrad.wgsl. */
export const LOGIT_GRAD_UNIFORM = uniformLayout([
  ['numRows', 'u32'], ['rowBase', 'u32'], ['vocab', 'u32'], ['temperature', 'f32'],
] as const);

const logitGradIo = {
  bindings: ['z', 'seq', 'rowPos', 'dlogp', 'dz'],
  uniform: LOGIT_GRAD_UNIFORM,
  values: (c: RowsConfig & { vocab: number; temperature: number }) => ({
    numRows: c.numRows, rowBase: c.rowBase ?? 0, vocab: c.vocab, temperature: c.temperature,
  }),
} as const;

/** logitGradCpu on the GPU: buffers z, seq, rowPos, dlogp, dz (output). */
export const logitGradKernel = defineKernel({
  label: 'logitGrad',
  wgsl: logitGradIoWGSL + logitGradWGSL + rowSoftmaxWGSL,
  workgroupSize: MLP_WORKGROUP_SIZE,
  ...logitGradIo,
  workgroups: (c) => perThread(c.numRows),
});

/** logitGradKernel with a subgroup per four rows (kernels/rowSubgroup.ts); needs the `subgroups` feature. */
export const logitGradSubgroupKernel = defineKernel({
  label: 'logitGradSubgroup',
  wgsl: subgroupRowSource(logitGradIoWGSL, logitGradSubgroupWGSL),
  workgroupSize: SUBGROUP_WORKGROUP_SIZE,
  requires: 'subgroups',
  ...logitGradIo,
  workgroups: (c) => subgroupRowWorkgroups(c.numRows),
});

/**
 * logitGrad's version per variant. It writes a whole row of gradients, which a subgroup's
 * neighbouring lanes write coalesced: on an H200 at 19 logits and 589,824 rows 0.077 ms, against
 * 0.184 for a thread per row and 0.147 for one with the row in registers (sampleUnrolled.wgsl),
 * whose stores stay V * 4 bytes apart between neighbouring threads.
 */
export const logitGradKernels: Record<KernelVariant, typeof logitGradKernel> = {
  thread: logitGradKernel,
  subgroup: logitGradSubgroupKernel,
};

export const createLogitGradKernel = (device: GPUDevice) => logitGradKernel.create(device);

/**
 * Rows per chunk of the two-level reductions (kernels/reduce.ts) at small and medium batches.
 * headGrad does a multiply-add per row and output. slotGrad does one add per row and owned
 * column but first zeroes V table entries per column, so its chunks stay as long as headGrad's:
 * the zeroing (and pass 2's reads) cost chunks * K*V*H against R*K*H adds, V / 64 of the work.
 */
export const HEAD_CHUNK_ROWS = 64;
export const SLOT_CHUNK_ROWS = 64;
/**
 * Outputs per invocation of headGrad's pass 1 (`VB` in headGrad.wgsl): 4 consecutive vocabulary
 * entries that share the row's h[r, j], read once for 4 multiply-adds.
 */
export const HEAD_GRAD_BLOCK = 4;

/** Mirrors `struct HeadGrad` in headGrad.wgsl. */
export const HEAD_GRAD_UNIFORM = uniformLayout([
  ['numRows', 'u32'], ['rowBase', 'u32'], ['vocab', 'u32'], ['hidden', 'u32'], ['rowsPerChunk', 'u32'], ['chunks', 'u32'],
] as const);

type HeadGradConfig = RowsConfig & { dims: MlpDims };
const headOutputs = (d: MlpDims) => (d.H + 1) * d.V;
const headChunks = (c: HeadGradConfig) => rowChunks(c.numRows, headOutputs(c.dims), HEAD_CHUNK_ROWS);

/** Pass 1 of headGrad: buffers h, dz, partials ([chunks, (H+1)V]: W2 then b2 per chunk); (chunk, j, 4 v) per invocation. */
export const headGradPartialKernel = defineKernel({
  label: 'headGrad',
  wgsl: headGradWGSL,
  workgroupSize: MLP_WORKGROUP_SIZE,
  bindings: ['h', 'dz', 'partials'],
  uniform: HEAD_GRAD_UNIFORM,
  values: (c: HeadGradConfig) => {
    const { rowsPerChunk, chunks } = headChunks(c);
    return { numRows: c.numRows, rowBase: c.rowBase ?? 0, vocab: c.dims.V, hidden: c.dims.H, rowsPerChunk, chunks };
  },
  workgroups: (c) => perThread(headChunks(c).chunks * (c.dims.H + 1) * Math.ceil(c.dims.V / HEAD_GRAD_BLOCK)),
});

/**
 * headGradCpu on the GPU, two dispatches (kernels/reduce.ts): buffers h, dz, partials (scratch of
 * at least `headGradKernel.scratchWords(config)` words) and grads (writes the W2 and b2 ranges).
 */
export const headGradKernel = defineReduction({
  label: 'headGrad',
  partial: headGradPartialKernel,
  layout: (c: HeadGradConfig) => ({ outputs: headOutputs(c.dims), chunks: headChunks(c).chunks, dstOff: paramLayout(c.dims).w2 }),
});
export const createHeadGradKernel = (device: GPUDevice) => headGradKernel.create(device);

/** Mirrors `struct HiddenGrad` in hiddenGrad.wgsl. */
export const HIDDEN_GRAD_UNIFORM = uniformLayout([
  ['numRows', 'u32'], ['rowBase', 'u32'], ['vocab', 'u32'], ['hidden', 'u32'], ['w2Off', 'u32'],
] as const);

/** hiddenDaCpu on the GPU, one thread per (row, hidden unit): buffers params, h, dz, da (output). */
export const hiddenGradKernel = defineKernel({
  label: 'hiddenGrad',
  wgsl: hiddenGradWGSL,
  workgroupSize: MLP_WORKGROUP_SIZE,
  bindings: ['params', 'h', 'dz', 'da'],
  uniform: HIDDEN_GRAD_UNIFORM,
  values: (c: RowsConfig & { dims: MlpDims }) => ({
    numRows: c.numRows, rowBase: c.rowBase ?? 0, vocab: c.dims.V, hidden: c.dims.H, w2Off: paramLayout(c.dims).w2,
  }),
  workgroups: (c) => perThread(c.numRows * c.dims.H),
});
export const createHiddenGradKernel = (device: GPUDevice) => hiddenGradKernel.create(device);

/** Mirrors `struct SlotGrad` in slotGrad.wgsl. */
export const SLOT_GRAD_UNIFORM = uniformLayout([
  ['numRows', 'u32'], ['rowBase', 'u32'], ['seqLen', 'u32'], ['vocab', 'u32'], ['context', 'u32'], ['hidden', 'u32'],
  ['rowsPerChunk', 'u32'], ['chunks', 'u32'],
] as const);

type SlotGradConfig = RowsConfig & { dims: MlpDims; seqLen: number };
const slotChunks = (c: SlotGradConfig) => rowChunks(c.numRows, slotTableWords(c.dims), SLOT_CHUNK_ROWS);

/**
 * Pass 1 of slotGrad: buffers seq, rowPos, da, partials ([chunks, K, V, H]). One invocation per
 * (chunk, slot k, hidden unit j) owns column j of slot k of its chunk's table: it zeroes it, then
 * scatters its rows' da into it in row order. No two invocations touch the same word, so no atomics.
 */
export const slotGradPartialKernel = defineKernel({
  label: 'slotGrad',
  wgsl: slotGradWGSL,
  workgroupSize: MLP_WORKGROUP_SIZE,
  bindings: ['seq', 'rowPos', 'da', 'partials'],
  uniform: SLOT_GRAD_UNIFORM,
  values: (c: SlotGradConfig) => {
    const { rowsPerChunk, chunks } = slotChunks(c);
    return {
      numRows: c.numRows, rowBase: c.rowBase ?? 0, seqLen: c.seqLen, vocab: c.dims.V,
      context: c.dims.K, hidden: c.dims.H, rowsPerChunk, chunks,
    };
  },
  workgroups: (c) => perThread(slotChunks(c).chunks * c.dims.K * c.dims.H),
});

/**
 * slotGradCpu on the GPU, two dispatches (kernels/reduce.ts): buffers seq, rowPos, da, partials
 * (scratch, `slotGradKernel.scratchWords(config)` words) and grads: bind the slot-sum buffer G
 * ([K, V, H], `slotTableWords(dims)` words) there, which pass 2 overwrites from word 0.
 */
export const slotGradKernel = defineReduction({
  label: 'slotGrad',
  partial: slotGradPartialKernel,
  layout: (c: SlotGradConfig) => ({ outputs: slotTableWords(c.dims), chunks: slotChunks(c).chunks, dstOff: 0 }),
});
export const createSlotGradKernel = (device: GPUDevice) => slotGradKernel.create(device);

/** Mirrors `struct FirstLayerGrad` in firstLayerGradIo.wgsl. */
export const FIRST_LAYER_GRAD_UNIFORM = uniformLayout([
  ['vocab', 'u32'], ['context', 'u32'], ['embed', 'u32'], ['hidden', 'u32'], ['embOff', 'u32'], ['w1Off', 'u32'],
] as const);

export interface FirstLayerGradConfig {
  dims: MlpDims;
}

/** Outputs of firstLayerGrad: the adjacent emb | W1 | b1 range of the gradient. */
const firstLayerOutputs = ({ V, K, D, H }: MlpDims) => V * D + K * D * H + H;

const firstLayerGradIo = {
  bindings: ['params', 'G', 'grads'],
  uniform: FIRST_LAYER_GRAD_UNIFORM,
  values: (c: FirstLayerGradConfig) => {
    const P = paramLayout(c.dims);
    return { vocab: c.dims.V, context: c.dims.K, embed: c.dims.D, hidden: c.dims.H, embOff: P.emb, w1Off: P.w1 };
  },
} as const;

export type FirstLayerGradBuffers = Record<'params' | 'G' | 'grads', BufferArg>;

/**
 * firstLayerGradCpu on the GPU, one thread per output: buffers params, G (slotGrad's slot sums),
 * grads (writes the emb, W1 and b1 ranges).
 */
export const firstLayerGradKernel = defineKernel({
  label: 'firstLayerGrad',
  wgsl: firstLayerGradIoWGSL + firstLayerGradWGSL + firstLayerGradTermsWGSL,
  workgroupSize: MLP_WORKGROUP_SIZE,
  ...firstLayerGradIo,
  workgroups: (c) => perThread(firstLayerOutputs(c.dims)),
});

/**
 * Embedding-gradient outputs per workgroup of 64 in firstLayerGradSubgroup: one per subgroup of 32
 * lanes (NVIDIA, Apple), two per subgroup of 64 (AMD). There are only V·D of them (304 at the
 * defaults), so more per workgroup would leave most multiprocessors idle and chain that many
 * K·H / 32-step sums one after another in each subgroup. SwiftShader's 16 subgroups of 4 leave 14
 * idle per workgroup, at little cost there (its subgroups run one after another on a core).
 */
export const FIRST_LAYER_EMB_PER_GROUP = 2;

/** Workgroups of firstLayerGradSubgroup: the demb ones, then a thread per dW1 and db1 output. */
export function firstLayerGradSubgroupWorkgroups({ V, K, D, H }: MlpDims): number {
  return Math.ceil((V * D) / FIRST_LAYER_EMB_PER_GROUP) + Math.ceil((K * D * H + H) / SUBGROUP_WORKGROUP_SIZE);
}

/**
 * firstLayerGradKernel with one subgroup per embedding-gradient output (its K·H terms split over
 * the lanes, then subgroupAdd; firstLayerGradSubgroup.wgsl); dW1 and db1 stay one thread each.
 * Same bindings, uniform and results up to the order of the demb sums; needs the `subgroups` feature.
 */
export const firstLayerGradSubgroupKernel = defineKernel({
  label: 'firstLayerGradSubgroup',
  wgsl: `const EMB_PER_GROUP: u32 = ${FIRST_LAYER_EMB_PER_GROUP}u;\n${firstLayerGradIoWGSL}${firstLayerGradSubgroupWGSL}${firstLayerGradTermsWGSL}${subgroupLanesWGSL}`,
  workgroupSize: SUBGROUP_WORKGROUP_SIZE,
  requires: 'subgroups',
  ...firstLayerGradIo,
  workgroups: (c) => firstLayerGradSubgroupWorkgroups(c.dims),
});

/** The backend's firstLayerGrad per variant, both bound with FirstLayerGradBuffers. */
export const firstLayerGradKernels: Record<KernelVariant, DefinedKernel<FirstLayerGradBuffers, FirstLayerGradConfig>> = {
  thread: firstLayerGradKernel,
  subgroup: firstLayerGradSubgroupKernel,
};
export const createFirstLayerGradKernel = (device: GPUDevice) => firstLayerGradKernel.create(device);

/**
 * Words of the scratch buffer the reductions of a backward pass share (they run one after
 * another), for every row count in `rowCounts` (the minibatch sizes of a run).
 */
export function backwardScratchWords(dims: MlpDims, seqLen: number, rowCounts: readonly number[]): number {
  let words = 1;
  for (const numRows of rowCounts) {
    const c = { dims, seqLen, numRows };
    words = Math.max(words, headGradKernel.scratchWords(c), slotGradKernel.scratchWords(c));
  }
  return words;
}
