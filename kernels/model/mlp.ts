/**
 * The policy: a "makemore MLP" over the last K tokens (Bengio et al. 2003; Karpathy's makemore).
 *   x = concat(emb[ctx_0], ..., emb[ctx_{K-1}])        [K*D]
 *   h = tanh(x W1 + b1)                                  [H]
 *   z = grammarMask((h W2 + b2) / temperature)           [V]
 * All parameters live in one flat f32 buffer so that Adam, the gradient norm and snapshots are one
 * elementwise pass:  emb [V, D] | W1 [K*D, H] | b1 [H] | W2 [H, V] | b2 [V]   (all row-major)
 *
 * This module holds the CPU model, forward and backward; the WGSL versions are in mlpKernels.ts
 * (logitGrad's in kernels/softmax/logitGrad.ts) and are checked against these. The same functions are
 * the CPU backend, so they are written for speed where that changes no bit: sums blocked in
 * registers, each distinct row computed once, rows and (slot, token) blocks of zero gradient left out.
 * mlpPlain.ts has the textbook loops they are checked against, bit for bit. The CPU backend runs the
 * backward pass as WebAssembly (wasm/backward.ts), checked against backwardCpu the same way.
 */
import { nonFiniteCpu } from '../stats/finiteCheck';
import type { Rng } from '../rng';

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
 * The first layer factored through the vocabulary (kernel `forward.wgsl embedProject`). Context slot k of
 * every row holds one of V tokens, so its share of x W1 is one of V vectors, formed once per
 * parameter set instead of once per row:
 *   proj[k, t, j] = sum_d emb[t, d] W1[k*D + d, j]          [K, V, H]
 * V*K*D*H multiply-adds per parameter set against R*K*D*H per pass over R rows; V is 19-80 in the
 * tasks and R is a batch of rows (128 per rollout slot, 1152 per update at the defaults).
 */
export function embedProjectCpu(params: Float32Array, dims: MlpDims): Float64Array {
  const { V, K } = dims;
  const proj = new Float64Array(K * V * dims.H);
  for (let k = 0; k < K; k++) for (let t = 0; t < V; t++) projectEntry(params, dims, k, t, proj);
  return proj;
}

/**
 * proj[k, t, :] from `src` (the parameters, or a copy of their embeddings and W1: the embeddings
 * at 0 and W1 after them, where paramLayout puts them). Eight outputs at a time held in registers over d: each still sums its D terms in d order
 * from +0, as a running sum in proj would, without a load and a store of proj per term.
 */
function projectEntry(src: Float32Array, dims: MlpDims, k: number, t: number, proj: Float64Array): void {
  const { V, D, H } = dims;
  const w1 = V * D + k * D * H;
  const out = (k * V + t) * H;
  const e = t * D;
  let j = 0;
  for (; j + 7 < H; j += 8) {
    let a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;
    for (let d = 0; d < D; d++) {
      const x = src[e + d]!;
      const w = w1 + d * H + j;
      a0 += x * src[w]!;
      a1 += x * src[w + 1]!;
      a2 += x * src[w + 2]!;
      a3 += x * src[w + 3]!;
      a4 += x * src[w + 4]!;
      a5 += x * src[w + 5]!;
      a6 += x * src[w + 6]!;
      a7 += x * src[w + 7]!;
    }
    proj[out + j] = a0;
    proj[out + j + 1] = a1;
    proj[out + j + 2] = a2;
    proj[out + j + 3] = a3;
    proj[out + j + 4] = a4;
    proj[out + j + 5] = a5;
    proj[out + j + 6] = a6;
    proj[out + j + 7] = a7;
  }
  for (; j < H; j++) {
    let a = 0;
    for (let d = 0; d < D; d++) a += src[e + d]! * src[w1 + d * H + j]!;
    proj[out + j] = a;
  }
}

/**
 * embedProjectCpu's table as forwardCpu reads it: entry (k, t) is formed the first time a row has
 * token t in context slot k. Rows read a fraction of the K*V entries (about 40 % of a pretraining
 * step's and 25 % of a rollout's in the collapse lesson), and an entry is the same bits however it
 * was formed (projectEntry, the same sums in the same order).
 */
export interface ProjTable {
  /** [K, V, H]; entry (k, t) holds its values once ready[k * V + t] is 1. */
  proj: Float64Array;
  ready: Uint8Array;
  /** The embeddings and W1 the entries are formed from: a copy, so later writes to the parameters do not reach them. */
  src: Float32Array;
}

export function projTable(params: Float32Array, dims: MlpDims): ProjTable {
  const { V, K, H } = dims;
  return { proj: new Float64Array(K * V * H), ready: new Uint8Array(K * V), src: params.slice(0, paramLayout(dims).b1) };
}

/** A table given whole (a kernel's case, whose table is an input of its own). */
export function givenProjTable(proj: Float64Array, dims: MlpDims): ProjTable {
  return { proj, ready: new Uint8Array(dims.K * dims.V).fill(1), src: new Float32Array(0) };
}

/**
 * Called every PROGRESS_ROWS rows by the long CPU loops below: they run for tens of seconds at the
 * largest settings without yielding, and this is how the worker tells the page it is not hung
 * (workers/core/cpuBackend.ts). It must not touch the loops' data.
 */
export type Progress = () => void;
export const PROGRESS_ROWS = 1024;

/**
 * Forward pass for R rows (kernels `forward.wgsl forwardHidden`, then `forward.wgsl forwardLogits`). Row r
 * predicts the token at flat position rowPos[r] of `seq` ([N, L] row-major); its grammar row is
 * the previous token:
 *   h[r, j] = tanh(b1[j] + sum_k proj[k, ctx_k(r), j]),   z[r] = grammarMask((h[r] W2 + b2) / temperature)
 * with `proj` embedProjectCpu's table (projTable: made here unless given, its entries formed as
 * rows read them). A context token outside the vocabulary (no task writes one) reads as PAD (token
 * 0), here and in every kernel, so that every row has exactly one token in every slot.
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
  proj: ProjTable = projTable(params, dims),
  progress?: Progress,
  memo?: RowMemo,
): ForwardOut {
  const { V, K, H } = dims;
  const P = paramLayout(dims);
  const R = rowPos.length;
  const h = new Float32Array(R * H);
  const z = new Float32Array(R * V);
  const slot = new Int32Array(K);
  const w2 = Float64Array.from(params.subarray(P.w2, P.w2 + H * V));
  const out = new Float64Array(V);
  const ctx = new Int32Array(K + 1);
  // Per previous token, the tokens the grammar allows after it (allowedAfter), listed as rows need them.
  const allowed: (Int32Array | undefined)[] = [];
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
    const kept = memo?.first.get(key);
    if (kept !== undefined && memoHas(memo!, kept, ctx)) {
      h.set(memo!.h.subarray(kept * H, (kept + 1) * H), r * H);
      z.set(memo!.z.subarray(kept * V, (kept + 1) * V), r * V);
      continue;
    }
    for (let k = 0; k < K; k++) {
      const entry = k * V + ctx[k]!;
      if (proj.ready[entry] === 0) {
        projectEntry(proj.src, dims, k, ctx[k]!, proj.proj);
        proj.ready[entry] = 1;
      }
      slot[k] = entry * H;
    }
    hiddenRow(params, P.b1, proj.proj, slot, K, H, h, r * H);
    const prev = seq[pos - 1]!;
    const tokens = (allowed[prev] ??= allowedAfter(grammar, V, prev));
    logitsRow(h, r * H, w2, params, P.b2, H, V, tokens, out);
    z.fill(MASKED_LOGIT, r * V, (r + 1) * V);
    for (let i = 0; i < tokens.length; i++) z[r * V + tokens[i]!] = out[i]! / temperature;
    if (memo && kept === undefined) memoAdd(memo, key, ctx, h, r * H, H, z, r * V, V);
  }
  return { h, z, firstOf };
}

/**
 * Rows forward passes computed, kept for later calls with the same parameters, grammar and
 * temperature (the CPU backend keeps one per parameter set: a rollout's rows are its old-policy
 * pass's, the reference's repeat every iteration). A row is a function of its context tokens and
 * previous token alone, so a later call that has one copies the bits it would compute.
 */
export interface RowMemo {
  /** Context hash (rowContext) -> the first kept row with it. */
  first: Map<number, number>;
  /** [n, K + 1] each kept row's tokens, as rowContext writes them. */
  ctx: Int32Array;
  h: Float32Array;
  z: Float32Array;
  n: number;
}

/** Floats (h and z) a memo keeps at most, 8 MiB: past it, new rows are computed and not kept. */
const MEMO_FLOATS = 1 << 21;

export function rowMemo(): RowMemo {
  return { first: new Map(), ctx: new Int32Array(0), h: new Float32Array(0), z: new Float32Array(0), n: 0 };
}

function memoHas(m: RowMemo, i: number, ctx: Int32Array): boolean {
  const w = ctx.length;
  for (let k = 0; k < w; k++) if (m.ctx[i * w + k] !== ctx[k]) return false;
  return true;
}

function memoAdd(m: RowMemo, key: number, ctx: Int32Array, h: Float32Array, ho: number, H: number, z: Float32Array, zo: number, V: number): void {
  if ((m.n + 1) * (H + V) > MEMO_FLOATS) return;
  const w = ctx.length;
  if ((m.n + 1) * H > m.h.length) {
    const rows = Math.max(64, m.n * 2);
    const grow = <T extends Int32Array | Float32Array>(a: T, width: number, make: (n: number) => T): T => {
      const b = make(rows * width);
      b.set(a);
      return b;
    };
    m.ctx = grow(m.ctx, w, (n) => new Int32Array(n));
    m.h = grow(m.h, H, (n) => new Float32Array(n));
    m.z = grow(m.z, V, (n) => new Float32Array(n));
  }
  m.ctx.set(ctx, m.n * w);
  m.h.set(h.subarray(ho, ho + H), m.n * H);
  m.z.set(z.subarray(zo, zo + V), m.n * V);
  m.first.set(key, m.n);
  m.n++;
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
 * The tokens the grammar allows after `prev`, in increasing order: the only logits a row keeps (the
 * others are MASKED_LOGIT whatever the sums give). In the tasks a row allows 2-13 of its 12-46
 * tokens, so the rest of the head's multiply-adds would be thrown away.
 */
function allowedAfter(grammar: Uint8Array, V: number, prev: number): Int32Array {
  const out: number[] = [];
  for (let v = 0; v < V; v++) if (grammar[prev * V + v]) out.push(v);
  return Int32Array.from(out);
}

/**
 * out[i] = b2[v] + sum_j h[hr + j] W2[j, v] for the i-th token v of `tokens`, each sum in j order
 * as a plain loop would add it (the same bits), eight logits at a time: their sums stay in
 * registers while W2's rows are read along, 1.4-2.5x faster than a loop over W2's columns
 * (BENCHMARKS.md, the CPU backend's layers).
 */
function logitsRow(h: Float32Array, hr: number, w2: Float64Array, params: Float32Array, b2: number, H: number, V: number, tokens: Int32Array, out: Float64Array): void {
  const n = tokens.length;
  let i = 0;
  for (; i + 7 < n; i += 8) {
    const t0 = tokens[i]!, t1 = tokens[i + 1]!, t2 = tokens[i + 2]!, t3 = tokens[i + 3]!;
    const t4 = tokens[i + 4]!, t5 = tokens[i + 5]!, t6 = tokens[i + 6]!, t7 = tokens[i + 7]!;
    let a0 = params[b2 + t0]!, a1 = params[b2 + t1]!, a2 = params[b2 + t2]!, a3 = params[b2 + t3]!;
    let a4 = params[b2 + t4]!, a5 = params[b2 + t5]!, a6 = params[b2 + t6]!, a7 = params[b2 + t7]!;
    for (let j = 0; j < H; j++) {
      const hj = h[hr + j]!;
      const w = j * V;
      a0 += hj * w2[w + t0]!;
      a1 += hj * w2[w + t1]!;
      a2 += hj * w2[w + t2]!;
      a3 += hj * w2[w + t3]!;
      a4 += hj * w2[w + t4]!;
      a5 += hj * w2[w + t5]!;
      a6 += hj * w2[w + t6]!;
      a7 += hj * w2[w + t7]!;
    }
    out[i] = a0;
    out[i + 1] = a1;
    out[i + 2] = a2;
    out[i + 3] = a3;
    out[i + 4] = a4;
    out[i + 5] = a5;
    out[i + 6] = a6;
    out[i + 7] = a7;
  }
  // The last n mod 8 logits four, then two, at a time: one running sum alone waits on each add.
  for (; i + 3 < n; i += 4) {
    const t0 = tokens[i]!, t1 = tokens[i + 1]!, t2 = tokens[i + 2]!, t3 = tokens[i + 3]!;
    let a0 = params[b2 + t0]!, a1 = params[b2 + t1]!, a2 = params[b2 + t2]!, a3 = params[b2 + t3]!;
    for (let j = 0; j < H; j++) {
      const hj = h[hr + j]!;
      const w = j * V;
      a0 += hj * w2[w + t0]!;
      a1 += hj * w2[w + t1]!;
      a2 += hj * w2[w + t2]!;
      a3 += hj * w2[w + t3]!;
    }
    out[i] = a0;
    out[i + 1] = a1;
    out[i + 2] = a2;
    out[i + 3] = a3;
  }
  for (; i + 1 < n; i += 2) {
    const t0 = tokens[i]!, t1 = tokens[i + 1]!;
    let a0 = params[b2 + t0]!, a1 = params[b2 + t1]!;
    for (let j = 0; j < H; j++) {
      const hj = h[hr + j]!;
      a0 += hj * w2[j * V + t0]!;
      a1 += hj * w2[j * V + t1]!;
    }
    out[i] = a0;
    out[i + 1] = a1;
  }
  for (; i < n; i++) {
    const t = tokens[i]!;
    let a = params[b2 + t]!;
    for (let j = 0; j < H; j++) a += h[hr + j]! * w2[j * V + t]!;
    out[i] = a;
  }
}

/**
 * h[o + j] = tanh(b1[j] + sum_k proj[slot[k] + j]) for j < H, each sum in k order from b1 as a
 * running sum would add it (the same bits), eight units at a time held in registers.
 */
function hiddenRow(params: Float32Array, b1: number, proj: Float64Array, slot: Int32Array, K: number, H: number, h: Float32Array, o: number): void {
  let j = 0;
  for (; j + 7 < H; j += 8) {
    const b = b1 + j;
    let a0 = params[b]!, a1 = params[b + 1]!, a2 = params[b + 2]!, a3 = params[b + 3]!;
    let a4 = params[b + 4]!, a5 = params[b + 5]!, a6 = params[b + 6]!, a7 = params[b + 7]!;
    for (let k = 0; k < K; k++) {
      const s = slot[k]! + j;
      a0 += proj[s]!;
      a1 += proj[s + 1]!;
      a2 += proj[s + 2]!;
      a3 += proj[s + 3]!;
      a4 += proj[s + 4]!;
      a5 += proj[s + 5]!;
      a6 += proj[s + 6]!;
      a7 += proj[s + 7]!;
    }
    h[o + j] = safeTanh(a0);
    h[o + j + 1] = safeTanh(a1);
    h[o + j + 2] = safeTanh(a2);
    h[o + j + 3] = safeTanh(a3);
    h[o + j + 4] = safeTanh(a4);
    h[o + j + 5] = safeTanh(a5);
    h[o + j + 6] = safeTanh(a6);
    h[o + j + 7] = safeTanh(a7);
  }
  for (; j < H; j++) {
    let a = params[b1 + j]!;
    for (let k = 0; k < K; k++) a += proj[slot[k]! + j]!;
    h[o + j] = safeTanh(a);
  }
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
 * Output-layer gradients (kernel `backward.wgsl headGrad`), written into the flat gradient `g`:
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
  // Eight rows at a time while eight are left: each accumulator then takes eight terms per load
  // and store.
  for (; i + 7 < n; i += 8) {
    if (i % PROGRESS_ROWS === PROGRESS_ROWS - 8) progress?.();
    const r0 = live[i]!, r1 = live[i + 1]!, r2 = live[i + 2]!, r3 = live[i + 3]!;
    const r4 = live[i + 4]!, r5 = live[i + 5]!, r6 = live[i + 6]!, r7 = live[i + 7]!;
    const d0 = r0 * V, d1 = r1 * V, d2 = r2 * V, d3 = r3 * V;
    const d4 = r4 * V, d5 = r5 * V, d6 = r6 * V, d7 = r7 * V;
    for (let j = 0; j < H; j++) {
      const h0 = h[r0 * H + j]!, h1 = h[r1 * H + j]!, h2 = h[r2 * H + j]!, h3 = h[r3 * H + j]!;
      const h4 = h[r4 * H + j]!, h5 = h[r5 * H + j]!, h6 = h[r6 * H + j]!, h7 = h[r7 * H + j]!;
      for (let v = 0; v < V; v++) {
        let w = w2[j * V + v]!;
        w += h0 * dz[d0 + v]!;
        w += h1 * dz[d1 + v]!;
        w += h2 * dz[d2 + v]!;
        w += h3 * dz[d3 + v]!;
        w += h4 * dz[d4 + v]!;
        w += h5 * dz[d5 + v]!;
        w += h6 * dz[d6 + v]!;
        w += h7 * dz[d7 + v]!;
        w2[j * V + v] = w;
      }
    }
    for (let v = 0; v < V; v++) {
      let b = b2[v]!;
      b += dz[d0 + v]!;
      b += dz[d1 + v]!;
      b += dz[d2 + v]!;
      b += dz[d3 + v]!;
      b += dz[d4 + v]!;
      b += dz[d5 + v]!;
      b += dz[d6 + v]!;
      b += dz[d7 + v]!;
      b2[v] = b;
    }
  }
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
 * Back through W2 and tanh (kernel `backward.wgsl hiddenGrad`):
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
    if (r + 1 < R && !(w2Finite && zeroRow(dz, d + V, V))) {
      // The next row needs its sums too: both rows' four units share each W2 load.
      hiddenDaPair(w2, dz, d, h, da, r * H, H, V);
      r++;
      if (r % PROGRESS_ROWS === PROGRESS_ROWS - 1) progress?.();
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

/** hiddenDaCpu's sums for two adjacent rows (dz at d and d + V, h and da at o and o + H) at once. */
function hiddenDaPair(w2: Float64Array, dz: Float32Array, d: number, h: Float32Array, da: Float32Array, o: number, H: number, V: number): void {
  const e = d + V;
  const p = o + H;
  let j = 0;
  for (; j + 3 < H; j += 4) {
    const w = j * V;
    let a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    let b0 = 0, b1 = 0, b2 = 0, b3 = 0;
    for (let v = 0; v < V; v++) {
      const x = dz[d + v]!;
      const y = dz[e + v]!;
      const w0 = w2[w + v]!;
      const w1 = w2[w + V + v]!;
      const ww2 = w2[w + 2 * V + v]!;
      const w3 = w2[w + 3 * V + v]!;
      a0 += w0 * x;
      a1 += w1 * x;
      a2 += ww2 * x;
      a3 += w3 * x;
      b0 += w0 * y;
      b1 += w1 * y;
      b2 += ww2 * y;
      b3 += w3 * y;
    }
    const g0 = h[o + j]!, g1 = h[o + j + 1]!, g2 = h[o + j + 2]!, g3 = h[o + j + 3]!;
    da[o + j] = a0 * (1 - g0 * g0);
    da[o + j + 1] = a1 * (1 - g1 * g1);
    da[o + j + 2] = a2 * (1 - g2 * g2);
    da[o + j + 3] = a3 * (1 - g3 * g3);
    const k0 = h[p + j]!, k1 = h[p + j + 1]!, k2 = h[p + j + 2]!, k3 = h[p + j + 3]!;
    da[p + j] = b0 * (1 - k0 * k0);
    da[p + j + 1] = b1 * (1 - k1 * k1);
    da[p + j + 2] = b2 * (1 - k2 * k2);
    da[p + j + 3] = b3 * (1 - k3 * k3);
  }
  for (; j < H; j++) {
    let a = 0;
    let b = 0;
    for (let v = 0; v < V; v++) {
      a += w2[j * V + v]! * dz[d + v]!;
      b += w2[j * V + v]! * dz[e + v]!;
    }
    const g = h[o + j]!;
    const k = h[p + j]!;
    da[o + j] = a * (1 - g * g);
    da[p + j] = b * (1 - k * k);
  }
}

/**
 * Row gradients gathered by context slot and token (kernel `backward.wgsl slotGrad`), the transpose of the
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
  // The (slot, token) blocks of G with a nonzero entry, per slot: a token no row has in slot k
  // leaves G[k, t] all +0. Its terms are then +-0 where the weight they multiply is finite, and a
  // float64 sum that starts at +0 is never -0, so leaving them out gives the same bits (liveRows);
  // with a non-finite weight (NaN * 0 is NaN) every block stays.
  const w1Finite = !nonFiniteCpu(params, 1, P.w1, P.w1 + K * D * H);
  const embFinite = !nonFiniteCpu(params, 1, P.emb, P.emb + V * D);
  const tokens: Int32Array[] = [];
  for (let k = 0; k < K; k++) {
    const ts = new Int32Array(V);
    let n = 0;
    for (let t = 0; t < V; t++) if (!embFinite || !zeroBlock(G, (k * V + t) * H, H)) ts[n++] = t;
    tokens.push(ts.subarray(0, n));
  }
  // demb: four embedding columns at a time share each G load; each sum still runs over k, then j.
  for (let t = 0; t < V; t++) {
    let d = 0;
    for (; d + 3 < D; d += 4) {
      let a0 = 0, a1 = 0, a2 = 0, a3 = 0;
      for (let k = 0; k < K; k++) {
        const s = (k * V + t) * H;
        if (w1Finite && zeroBlock(G, s, H)) continue;
        const w = P.w1 + (k * D + d) * H;
        for (let j = 0; j < H; j++) {
          const x = G[s + j]!;
          a0 += params[w + j]! * x;
          a1 += params[w + H + j]! * x;
          a2 += params[w + 2 * H + j]! * x;
          a3 += params[w + 3 * H + j]! * x;
        }
      }
      g[P.emb + t * D + d] = a0;
      g[P.emb + t * D + d + 1] = a1;
      g[P.emb + t * D + d + 2] = a2;
      g[P.emb + t * D + d + 3] = a3;
    }
    for (; d < D; d++) {
      let acc = 0;
      for (let k = 0; k < K; k++) {
        const s = (k * V + t) * H;
        if (w1Finite && zeroBlock(G, s, H)) continue;
        const w = P.w1 + (k * D + d) * H;
        for (let j = 0; j < H; j++) acc += params[w + j]! * G[s + j]!;
      }
      g[P.emb + t * D + d] = acc;
    }
  }
  // dW1: eight weights at a time held in registers over the tokens; each still sums over t in order.
  for (let k = 0; k < K; k++) {
    const ts = tokens[k]!;
    const n = ts.length;
    for (let d = 0; d < D; d++) {
      const out = P.w1 + (k * D + d) * H;
      let j = 0;
      for (; j + 7 < H; j += 8) {
        let a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;
        for (let i = 0; i < n; i++) {
          const t = ts[i]!;
          const x = params[P.emb + t * D + d]!;
          const s = (k * V + t) * H + j;
          a0 += x * G[s]!;
          a1 += x * G[s + 1]!;
          a2 += x * G[s + 2]!;
          a3 += x * G[s + 3]!;
          a4 += x * G[s + 4]!;
          a5 += x * G[s + 5]!;
          a6 += x * G[s + 6]!;
          a7 += x * G[s + 7]!;
        }
        g[out + j] = a0;
        g[out + j + 1] = a1;
        g[out + j + 2] = a2;
        g[out + j + 3] = a3;
        g[out + j + 4] = a4;
        g[out + j + 5] = a5;
        g[out + j + 6] = a6;
        g[out + j + 7] = a7;
      }
      for (; j < H; j++) {
        let a = 0;
        for (let i = 0; i < n; i++) {
          const t = ts[i]!;
          a += params[P.emb + t * D + d]! * G[(k * V + t) * H + j]!;
        }
        g[out + j] = a;
      }
    }
  }
  for (let j = 0; j < H; j++) {
    let acc = 0;
    for (let t = 0; t < V; t++) acc += G[t * H + j]!;
    g[P.b1 + j] = acc;
  }
  return g;
}

function zeroBlock(a: Float64Array, off: number, n: number): boolean {
  for (let i = off; i < off + n; i++) if (a[i] !== 0) return false;
  return true;
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

