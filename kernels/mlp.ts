/**
 * The policy: a "makemore MLP" over the last K tokens (Bengio et al. 2003; Karpathy's makemore).
 *   x = concat(emb[ctx_0], ..., emb[ctx_{K-1}])        [K*D]
 *   h = tanh(x W1 + b1)                                  [H]
 *   z = grammarMask((h W2 + b2) / temperature)           [V]
 * All parameters live in one flat f32 buffer so that Adam, the gradient norm and snapshots are one
 * elementwise pass:  emb [V, D] | W1 [K*D, H] | b1 [H] | W2 [H, V] | b2 [V]   (all row-major)
 *
 * This module holds the CPU reference of the forward and backward passes; the WGSL versions live in
 * the kernels named in each function's doc and are checked against these.
 */
import type { Rng } from '../workers/rng';
import embedGradWGSL from './embedGrad.wgsl?raw';
import forwardWGSL from './forward.wgsl?raw';
import headGradWGSL from './headGrad.wgsl?raw';
import hiddenGradWGSL from './hiddenGrad.wgsl?raw';
import inputGradWGSL from './inputGrad.wgsl?raw';
import logitGradWGSL from './logitGrad.wgsl?raw';
import rowSoftmaxWGSL from './rowSoftmax.wgsl?raw';
import { defineKernel, uniformLayout } from './pipeline';
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
 * Forward pass for R rows (kernel `forward.wgsl`). Row r predicts the token at flat position
 * rowPos[r] of `seq` ([N, L] row-major); its grammar row is the previous token:
 *   h[r, j] = tanh(b1[j] + sum_k proj[k, ctx_k(r), j]),   z[r] = grammarMask((h[r] W2 + b2) / temperature)
 * with `proj` from embedProjectCpu (computed here unless given). A context token outside the
 * vocabulary (no task writes one) reads as PAD (token 0), here and in every kernel, so that every
 * row has exactly one token in every slot.
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
): ForwardOut {
  const { V, K, H } = dims;
  const P = paramLayout(dims);
  const R = rowPos.length;
  const h = new Float32Array(R * H);
  const z = new Float32Array(R * V);
  const hid = new Float64Array(H);
  for (let r = 0; r < R; r++) {
    const pos = rowPos[r]!;
    for (let j = 0; j < H; j++) hid[j] = params[P.b1 + j]!;
    for (let k = 0; k < K; k++) {
      const tok = vocabToken(contextToken(seq, pos, L, K, k), V);
      const row = (k * V + tok) * H;
      for (let j = 0; j < H; j++) hid[j]! += proj[row + j]!;
    }
    for (let j = 0; j < H; j++) h[r * H + j] = safeTanh(hid[j]!);
    const prev = seq[pos - 1]!;
    for (let v = 0; v < V; v++) {
      if (!grammar[prev * V + v]) {
        z[r * V + v] = MASKED_LOGIT;
        continue;
      }
      let acc = params[P.b2 + v]!;
      for (let j = 0; j < H; j++) acc += h[r * H + j]! * params[P.w2 + j * V + v]!;
      z[r * V + v] = acc / temperature;
    }
  }
  return { h, z };
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
 * Output-layer gradients (kernel `headGrad.wgsl`), written into the flat gradient `g`:
 *   dW2[j, v] = sum_r h[r, j] dz[r, v],  db2[v] = sum_r dz[r, v]   (R rows, summed in row order).
 */
export function headGradCpu(dims: MlpDims, R: number, h: Float32Array, dz: Float32Array, g: Float32Array): Float32Array {
  const { V, H } = dims;
  const P = paramLayout(dims);
  // Rows outer, float64 accumulators: every output still sums its terms in row order.
  const w2 = new Float64Array(H * V);
  const b2 = new Float64Array(V);
  for (let r = 0; r < R; r++) {
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

export interface HiddenGrad {
  /** [R, H] gradient w.r.t. the hidden pre-activations. */
  da: Float32Array;
  /** [R, K*D] gradient w.r.t. the concatenated context embeddings. */
  dx: Float32Array;
}

/** Back through W2 and tanh: da[r, j] = (1 - h[r, j]^2) sum_v W2[j, v] dz[r, v]   [R, H]. */
export function hiddenDaCpu(params: Float32Array, dims: MlpDims, R: number, h: Float32Array, dz: Float32Array): Float32Array {
  const { V, H } = dims;
  const P = paramLayout(dims);
  const da = new Float32Array(R * H);
  for (let r = 0; r < R; r++) {
    for (let j = 0; j < H; j++) {
      let acc = 0;
      for (let v = 0; v < V; v++) acc += params[P.w2 + j * V + v]! * dz[r * V + v]!;
      const hj = h[r * H + j]!;
      da[r * H + j] = acc * (1 - hj * hj);
    }
  }
  return da;
}

/**
 * Back through tanh and into the inputs (kernel `hiddenGrad.wgsl`), per row:
 *   da[r, j] = (1 - h[r, j]^2) sum_v W2[j, v] dz[r, v],   dx[r, i] = sum_j W1[i, j] da[r, j].
 */
export function hiddenGradCpu(params: Float32Array, dims: MlpDims, R: number, h: Float32Array, dz: Float32Array): HiddenGrad {
  const { K, D, H } = dims;
  const P = paramLayout(dims);
  const da = hiddenDaCpu(params, dims, R, h, dz);
  const dx = new Float32Array(R * K * D);
  for (let r = 0; r < R; r++) {
    for (let i = 0; i < K * D; i++) {
      let acc = 0;
      for (let j = 0; j < H; j++) acc += params[P.w1 + i * H + j]! * da[r * H + j]!;
      dx[r * K * D + i] = acc;
    }
  }
  return { da, dx };
}

/**
 * Input-layer gradients (kernel `inputGrad.wgsl`), written into the flat gradient `g`:
 *   dW1[i, j] = sum_r x[r, i] da[r, j],  db1[j] = sum_r da[r, j],  x[r, k*D + d] = emb[ctx_k(r), d].
 */
export function inputGradCpu(
  params: Float32Array,
  dims: MlpDims,
  seq: Int32Array | Uint32Array,
  L: number,
  rowPos: Uint32Array,
  da: Float32Array,
  g: Float32Array,
): Float32Array {
  const { K, D, H } = dims;
  const P = paramLayout(dims);
  const R = rowPos.length;
  // Rows outer, float64 accumulators: every output still sums its terms in row order.
  const w1 = new Float64Array(K * D * H);
  const b1 = new Float64Array(H);
  for (let r = 0; r < R; r++) {
    for (let k = 0; k < K; k++) {
      const tok = contextToken(seq, rowPos[r]!, L, K, k);
      for (let d = 0; d < D; d++) {
        const x = params[P.emb + tok * D + d]!;
        const row = (k * D + d) * H;
        for (let j = 0; j < H; j++) w1[row + j]! += x * da[r * H + j]!;
      }
    }
    for (let j = 0; j < H; j++) b1[j]! += da[r * H + j]!;
  }
  g.set(w1, P.w1);
  g.set(b1, P.b1);
  return g;
}

/**
 * Embedding gradient (kernel `embedGrad.wgsl`), written into the flat gradient `g`: dx scattered to
 * each context token's row,  demb[t, d] = sum_r sum_k [ctx_k(r) = t] dx[r, k*D + d]. The GPU needs
 * no float atomics for the scatter: each invocation owns one embedding column of one row chunk's
 * table (kernels/reduce.ts), and the chunk tables are added in chunk order.
 */
export function embedGradCpu(
  dims: MlpDims,
  seq: Int32Array | Uint32Array,
  L: number,
  rowPos: Uint32Array,
  dx: Float32Array,
  g: Float32Array,
): Float32Array {
  const { V, K, D } = dims;
  const P = paramLayout(dims);
  const R = rowPos.length;
  // Scattered in (row, k) order into float64 accumulators: each (token, d) still sums its terms in
  // the order of the gathered definition above, at R*K*D work instead of V*D*R*K.
  const emb = new Float64Array(V * D);
  for (let r = 0; r < R; r++) {
    for (let k = 0; k < K; k++) {
      const t = contextToken(seq, rowPos[r]!, L, K, k);
      for (let d = 0; d < D; d++) emb[t * D + d]! += dx[r * K * D + k * D + d]!;
    }
  }
  g.set(emb, P.emb);
  return g;
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
): Float64Array {
  const { V, K, H } = dims;
  const R = rowPos.length;
  const G = new Float64Array(K * V * H);
  for (let r = 0; r < R; r++) {
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
 * Backward pass of the MLP from logit gradients to the flat parameter gradient: headGrad, the da
 * half of hiddenGrad, slotGrad and firstLayerGrad in turn (each piece's kernel is named in its
 * doc). Sums here are float64; the GPU kernels sum in f32 over fixed row chunks, then the chunks in
 * order (kernels/reduce.ts), so their results are the same bits on every run and within f32
 * rounding of these.
 */
export function backwardCpu(
  params: Float32Array,
  dims: MlpDims,
  seq: Int32Array | Uint32Array,
  L: number,
  rowPos: Uint32Array,
  h: Float32Array,
  dz: Float32Array,
): Float32Array {
  const R = rowPos.length;
  const g = new Float32Array(paramLayout(dims).size);
  headGradCpu(dims, R, h, dz, g);
  const da = hiddenDaCpu(params, dims, R, h, dz);
  firstLayerGradCpu(params, dims, slotGradCpu(dims, seq, L, rowPos, da), g);
  return g;
}

// ---------------------------------------------------------------------------------------------
// GPU kernels. Row-indexed arrays (h, z, dz, da, dx) use the row's index in the whole row set:
// row r of a call is rowBase + r, so minibatches share buffers with the full batch.

/** Threads per workgroup of the per-row (forward, hiddenGrad) and per-parameter kernels. */
export const MLP_WORKGROUP_SIZE = 64;
/** Sizes of the fixed workgroup arrays in forward.wgsl and hiddenGrad.wgsl. */
export const MAX_HIDDEN = 1024;
export const MAX_CONTEXT = 32;

function checkDims(label: string, d: MlpDims): void {
  if (d.H > MAX_HIDDEN) throw new Error(`${label}: hidden ${d.H} exceeds ${MAX_HIDDEN}`);
  if (d.K > MAX_CONTEXT) throw new Error(`${label}: context ${d.K} exceeds ${MAX_CONTEXT}`);
}

const perThread = (n: number) => Math.ceil(n / MLP_WORKGROUP_SIZE);

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

/** Mirrors `struct Forward` in forward.wgsl. */
export const FORWARD_UNIFORM = uniformLayout([
  ['numRows', 'u32'], ['rowBase', 'u32'], ['outBase', 'u32'], ['seqLen', 'u32'],
  ['vocab', 'u32'], ['context', 'u32'], ['embed', 'u32'], ['hidden', 'u32'],
  ['embOff', 'u32'], ['w1Off', 'u32'], ['b1Off', 'u32'], ['w2Off', 'u32'],
  ['b2Off', 'u32'], ['temperature', 'f32'],
] as const);

/** forwardCpu on the GPU: buffers params, seq (u32), rowPos, grammar (u32 0/1), h and z (outputs). */
export const forwardKernel = defineKernel({
  label: 'forward',
  wgsl: forwardWGSL,
  workgroupSize: MLP_WORKGROUP_SIZE,
  bindings: ['params', 'seq', 'rowPos', 'grammar', 'h', 'z'],
  uniform: FORWARD_UNIFORM,
  check: (c: ForwardConfig) => checkDims('forward', c.dims),
  values: (c: ForwardConfig) => {
    const P = paramLayout(c.dims);
    const rowBase = c.rowBase ?? 0;
    return {
      numRows: c.numRows, rowBase, outBase: c.outBase ?? rowBase, seqLen: c.seqLen,
      vocab: c.dims.V, context: c.dims.K, embed: c.dims.D, hidden: c.dims.H,
      embOff: P.emb, w1Off: P.w1, b1Off: P.b1, w2Off: P.w2, b2Off: P.b2, temperature: c.temperature,
    };
  },
  workgroups: (c: ForwardConfig) => c.numRows,
});
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

/** logitGradCpu on the GPU: buffers z, seq, rowPos, dlogp, dz (output). */
export const logitGradKernel = defineKernel({
  label: 'logitGrad',
  wgsl: logitGradWGSL + rowSoftmaxWGSL,
  workgroupSize: MLP_WORKGROUP_SIZE,
  bindings: ['z', 'seq', 'rowPos', 'dlogp', 'dz'],
  uniform: LOGIT_GRAD_UNIFORM,
  values: (c: RowsConfig & { vocab: number; temperature: number }) => ({
    numRows: c.numRows, rowBase: c.rowBase ?? 0, vocab: c.vocab, temperature: c.temperature,
  }),
  workgroups: (c) => perThread(c.numRows),
});
export const createLogitGradKernel = (device: GPUDevice) => logitGradKernel.create(device);

/**
 * Rows per chunk of the two-level reductions (kernels/reduce.ts) at small and medium batches:
 * headGrad and inputGrad do a multiply-add per row and output, embedGrad only K adds per row and
 * embedding column (its pass 1 has one invocation per chunk and column, so smaller chunks).
 */
export const HEAD_CHUNK_ROWS = 64;
export const INPUT_CHUNK_ROWS = 64;
export const EMBED_CHUNK_ROWS = 16;
/**
 * Outputs per invocation of pass 1 (`VB` in headGrad.wgsl, `JB` in inputGrad.wgsl): 4 consecutive
 * vocabulary entries (headGrad) or hidden units (inputGrad) that share the row's h[r, j] or
 * gathered embedding entry, read once for 4 multiply-adds.
 */
export const HEAD_GRAD_BLOCK = 4;
export const INPUT_GRAD_BLOCK = 4;

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
  ['numRows', 'u32'], ['rowBase', 'u32'], ['vocab', 'u32'], ['hidden', 'u32'], ['inputs', 'u32'], ['w1Off', 'u32'], ['w2Off', 'u32'],
] as const);

/** hiddenGradCpu on the GPU: buffers params, h, dz, da and dx (outputs). */
export const hiddenGradKernel = defineKernel({
  label: 'hiddenGrad',
  wgsl: hiddenGradWGSL,
  workgroupSize: MLP_WORKGROUP_SIZE,
  bindings: ['params', 'h', 'dz', 'da', 'dx'],
  uniform: HIDDEN_GRAD_UNIFORM,
  check: (c: RowsConfig & { dims: MlpDims }) => checkDims('hiddenGrad', c.dims),
  values: (c: RowsConfig & { dims: MlpDims }) => {
    const P = paramLayout(c.dims);
    return {
      numRows: c.numRows, rowBase: c.rowBase ?? 0, vocab: c.dims.V, hidden: c.dims.H,
      inputs: c.dims.K * c.dims.D, w1Off: P.w1, w2Off: P.w2,
    };
  },
  workgroups: (c) => c.numRows,
});
export const createHiddenGradKernel = (device: GPUDevice) => hiddenGradKernel.create(device);

/** Mirrors `struct InputGrad` in inputGrad.wgsl. */
export const INPUT_GRAD_UNIFORM = uniformLayout([
  ['numRows', 'u32'], ['rowBase', 'u32'], ['seqLen', 'u32'], ['context', 'u32'], ['embed', 'u32'],
  ['hidden', 'u32'], ['embOff', 'u32'], ['rowsPerChunk', 'u32'], ['chunks', 'u32'],
] as const);

type InputGradConfig = RowsConfig & { dims: MlpDims; seqLen: number };
const inputOutputs = (d: MlpDims) => (d.K * d.D + 1) * d.H;
const inputChunks = (c: InputGradConfig) => rowChunks(c.numRows, inputOutputs(c.dims), INPUT_CHUNK_ROWS);

/** Pass 1 of inputGrad: buffers params, seq, rowPos, da, partials ([chunks, (KD+1)H]: W1 then b1 per chunk); (chunk, i, 4 j) per invocation. */
export const inputGradPartialKernel = defineKernel({
  label: 'inputGrad',
  wgsl: inputGradWGSL,
  workgroupSize: MLP_WORKGROUP_SIZE,
  bindings: ['params', 'seq', 'rowPos', 'da', 'partials'],
  uniform: INPUT_GRAD_UNIFORM,
  values: (c: InputGradConfig) => {
    const P = paramLayout(c.dims);
    const { rowsPerChunk, chunks } = inputChunks(c);
    return {
      numRows: c.numRows, rowBase: c.rowBase ?? 0, seqLen: c.seqLen, context: c.dims.K, embed: c.dims.D,
      hidden: c.dims.H, embOff: P.emb, rowsPerChunk, chunks,
    };
  },
  workgroups: (c) => perThread(inputChunks(c).chunks * (c.dims.K * c.dims.D + 1) * Math.ceil(c.dims.H / INPUT_GRAD_BLOCK)),
});

/**
 * inputGradCpu on the GPU, two dispatches (kernels/reduce.ts): buffers params, seq, rowPos, da,
 * partials (scratch, `inputGradKernel.scratchWords(config)` words) and grads (writes W1 and b1).
 */
export const inputGradKernel = defineReduction({
  label: 'inputGrad',
  partial: inputGradPartialKernel,
  layout: (c: InputGradConfig) => ({ outputs: inputOutputs(c.dims), chunks: inputChunks(c).chunks, dstOff: paramLayout(c.dims).w1 }),
});
export const createInputGradKernel = (device: GPUDevice) => inputGradKernel.create(device);

/** Mirrors `struct EmbedGrad` in embedGrad.wgsl. */
export const EMBED_GRAD_UNIFORM = uniformLayout([
  ['numRows', 'u32'], ['rowBase', 'u32'], ['seqLen', 'u32'], ['vocab', 'u32'], ['context', 'u32'], ['embed', 'u32'],
  ['rowsPerChunk', 'u32'], ['chunks', 'u32'],
] as const);

type EmbedGradConfig = RowsConfig & { dims: MlpDims; seqLen: number };
const embedOutputs = (d: MlpDims) => d.V * d.D;
const embedChunks = (c: EmbedGradConfig) => rowChunks(c.numRows, embedOutputs(c.dims), EMBED_CHUNK_ROWS);

/**
 * Pass 1 of embedGrad: buffers seq, rowPos, dx, partials ([chunks, V, D]). One invocation per
 * (chunk, embedding column d) owns column d of its chunk's table: it zeroes it, then scatters its
 * rows' dx into it in (row, slot) order. No two invocations touch the same word, so no atomics.
 */
export const embedGradPartialKernel = defineKernel({
  label: 'embedGrad',
  wgsl: embedGradWGSL,
  workgroupSize: MLP_WORKGROUP_SIZE,
  bindings: ['seq', 'rowPos', 'dx', 'partials'],
  uniform: EMBED_GRAD_UNIFORM,
  values: (c: EmbedGradConfig) => {
    const { rowsPerChunk, chunks } = embedChunks(c);
    return {
      numRows: c.numRows, rowBase: c.rowBase ?? 0, seqLen: c.seqLen, vocab: c.dims.V,
      context: c.dims.K, embed: c.dims.D, rowsPerChunk, chunks,
    };
  },
  workgroups: (c) => perThread(embedChunks(c).chunks * c.dims.D),
});

/**
 * embedGradCpu on the GPU, two dispatches (kernels/reduce.ts): buffers seq, rowPos, dx, partials
 * (scratch, `embedGradKernel.scratchWords(config)` words) and grads (writes the embedding range).
 */
export const embedGradKernel = defineReduction({
  label: 'embedGrad',
  partial: embedGradPartialKernel,
  layout: (c: EmbedGradConfig) => ({ outputs: embedOutputs(c.dims), chunks: embedChunks(c).chunks, dstOff: paramLayout(c.dims).emb }),
});
export const createEmbedGradKernel = (device: GPUDevice) => embedGradKernel.create(device);

/**
 * Words of the scratch buffer the three reductions of a backward pass share (they run one after
 * another), for every row count in `rowCounts` (the minibatch sizes of a run).
 */
export function backwardScratchWords(dims: MlpDims, seqLen: number, rowCounts: readonly number[]): number {
  let words = 1;
  for (const numRows of rowCounts) {
    const c = { dims, seqLen, numRows };
    words = Math.max(words, headGradKernel.scratchWords(c), inputGradKernel.scratchWords(c), embedGradKernel.scratchWords(c));
  }
  return words;
}
