/**
 * The MLP's CPU reference written as textbook loops, for tests of the optimized one in mlp.ts
 * (blocked sums, repeated rows copied, rows of zeros left out): each output sums the same float64
 * terms in the same order, so the two agree bit for bit.
 */
import { contextToken, MASKED_LOGIT, paramLayout, safeTanh, vocabToken, type MlpDims } from './mlp';

export function forwardPlain(p: Float32Array, dims: MlpDims, seq: Int32Array, L: number, rowPos: Uint32Array, grammar: Uint8Array, temperature: number) {
  const { V, K, H } = dims;
  const P = paramLayout(dims);
  const proj = embedProjectPlain(p, dims);
  const h = new Float32Array(rowPos.length * H);
  const z = new Float32Array(rowPos.length * V);
  rowPos.forEach((pos, r) => {
    for (let j = 0; j < H; j++) {
      let a = p[P.b1 + j]!;
      for (let k = 0; k < K; k++) a += proj[(k * V + vocabToken(contextToken(seq, pos, L, K, k), V)) * H + j]!;
      h[r * H + j] = safeTanh(a);
    }
    for (let v = 0; v < V; v++) {
      let a = p[P.b2 + v]!;
      for (let j = 0; j < H; j++) a += h[r * H + j]! * p[P.w2 + j * V + v]!;
      z[r * V + v] = grammar[seq[pos - 1]! * V + v] ? a / temperature : MASKED_LOGIT;
    }
  });
  return { h, z };
}

export function headGradPlain(dims: MlpDims, R: number, h: Float32Array, dz: Float32Array): Float32Array {
  const { V, H } = dims;
  const P = paramLayout(dims);
  const g = new Float32Array(P.size);
  for (let v = 0; v < V; v++) {
    for (let j = 0; j < H; j++) {
      let a = 0;
      for (let r = 0; r < R; r++) a += h[r * H + j]! * dz[r * V + v]!;
      g[P.w2 + j * V + v] = a;
    }
    let b = 0;
    for (let r = 0; r < R; r++) b += dz[r * V + v]!;
    g[P.b2 + v] = b;
  }
  return g;
}

export function hiddenDaPlain(p: Float32Array, dims: MlpDims, R: number, h: Float32Array, dz: Float32Array): Float32Array {
  const { V, H } = dims;
  const P = paramLayout(dims);
  const da = new Float32Array(R * H);
  for (let r = 0; r < R; r++) {
    for (let j = 0; j < H; j++) {
      let a = 0;
      for (let v = 0; v < V; v++) a += p[P.w2 + j * V + v]! * dz[r * V + v]!;
      da[r * H + j] = a * (1 - h[r * H + j]! ** 2);
    }
  }
  return da;
}

export function slotGradPlain(dims: MlpDims, seq: Int32Array, L: number, rowPos: Uint32Array, da: Float32Array): Float64Array {
  const { V, K, H } = dims;
  const G = new Float64Array(K * V * H);
  for (let k = 0; k < K; k++) {
    for (let j = 0; j < H; j++) {
      rowPos.forEach((pos, r) => {
        G[(k * V + vocabToken(contextToken(seq, pos, L, K, k), V)) * H + j]! += da[r * H + j]!;
      });
    }
  }
  return G;
}

export function embedProjectPlain(p: Float32Array, dims: MlpDims): Float64Array {
  const { V, K, D, H } = dims;
  const P = paramLayout(dims);
  const proj = new Float64Array(K * V * H);
  for (let k = 0; k < K; k++) {
    for (let t = 0; t < V; t++) {
      for (let j = 0; j < H; j++) {
        let a = 0;
        for (let d = 0; d < D; d++) a += p[P.emb + t * D + d]! * p[P.w1 + (k * D + d) * H + j]!;
        proj[(k * V + t) * H + j] = a;
      }
    }
  }
  return proj;
}

export function firstLayerGradPlain(p: Float32Array, dims: MlpDims, G: Float64Array): Float32Array {
  const { V, K, D, H } = dims;
  const P = paramLayout(dims);
  const g = new Float32Array(P.size);
  for (let t = 0; t < V; t++) {
    for (let d = 0; d < D; d++) {
      let a = 0;
      for (let k = 0; k < K; k++) for (let j = 0; j < H; j++) a += p[P.w1 + (k * D + d) * H + j]! * G[(k * V + t) * H + j]!;
      g[P.emb + t * D + d] = a;
    }
  }
  for (let k = 0; k < K; k++) {
    for (let d = 0; d < D; d++) {
      for (let j = 0; j < H; j++) {
        let a = 0;
        for (let t = 0; t < V; t++) a += p[P.emb + t * D + d]! * G[(k * V + t) * H + j]!;
        g[P.w1 + (k * D + d) * H + j] = a;
      }
    }
  }
  for (let j = 0; j < H; j++) {
    let a = 0;
    for (let t = 0; t < V; t++) a += G[t * H + j]!;
    g[P.b1 + j] = a;
  }
  return g;
}
