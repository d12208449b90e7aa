/**
 * Seeded inputs for the self-test cases: MLP parameters, token sequences and grammars for the
 * forward and backward kernels, and masked-logit rows (ordinary, ±1e4, one dominant token, one
 * allowed token, all equal) for the row-softmax kernels. The same generators and seeds as the GPU
 * tests' fixtures (tests/helpers/mlpFixture.ts, tests/helpers/logits.ts), so a self-test case and
 * the test it came from see the same numbers.
 */
import { createRng, type Rng } from '../../workers/rng';
import { MASKED_LOGIT, paramLayout, type MlpDims } from '../mlp';

export interface MlpCase {
  dims: MlpDims;
  params: Float32Array;
  /** [N, L] tokens. */
  seq: Int32Array;
  L: number;
  /** [rows] flat positions, never at a sequence start (every row has a previous token). */
  rowPos: Uint32Array;
  /** [V * V] 0/1, every row allowing at least one token. */
  grammar: Uint8Array;
}

/** Parameters of order 1 everywhere (W2 included), so the sums the kernels do are not tiny. */
export function randomParams(dims: MlpDims, rng: Rng, scale = 0.5): Float32Array {
  const p = new Float32Array(paramLayout(dims).size);
  for (let i = 0; i < p.length; i++) p[i] = rng.normal() * scale;
  return p;
}

export function randomGrammar(V: number, rng: Rng, density = 0.6): Uint8Array {
  const g = new Uint8Array(V * V);
  for (let prev = 0; prev < V; prev++) {
    for (let t = 0; t < V; t++) g[prev * V + t] = rng.next() < density ? 1 : 0;
    g[prev * V + rng.int(V)] = 1;
  }
  return g;
}

export function makeMlpCase(dims: MlpDims, rows: number, rng: Rng, o: { N?: number; L?: number } = {}): MlpCase {
  const L = o.L ?? 7;
  const N = o.N ?? Math.max(1, Math.ceil(rows / (L - 1)));
  const grammar = randomGrammar(dims.V, rng);
  const seq = new Int32Array(N * L);
  for (let i = 0; i < seq.length; i++) seq[i] = rng.int(dims.V);
  const rowPos = new Uint32Array(rows);
  for (let r = 0; r < rows; r++) {
    const n = rng.int(N);
    rowPos[r] = n * L + 1 + rng.int(L - 1);
    // The sampled token must be one the grammar allows after its previous token.
    const prev = seq[rowPos[r]! - 1]!;
    const allowed: number[] = [];
    for (let t = 0; t < dims.V; t++) if (grammar[prev * dims.V + t]) allowed.push(t);
    seq[rowPos[r]!] = allowed[rng.int(allowed.length)]!;
  }
  // Rewriting a sampled token changes the previous token of the next position; fix those rows up.
  for (let r = 0; r < rows; r++) {
    const prev = seq[rowPos[r]! - 1]!;
    if (!grammar[prev * dims.V + seq[rowPos[r]!]!]) grammar[prev * dims.V + seq[rowPos[r]!]!] = 1;
  }
  return { dims, params: randomParams(dims, rng), seq, L, rowPos, grammar };
}

export interface LogitCase {
  /** [rows, V] masked logits. */
  z: Float32Array;
  V: number;
  /** Sequence holding the sampled token of row r at rowPos[r] = 2r + 1. */
  seq: Int32Array;
  rowPos: Uint32Array;
}

export type RowKind = 'normal' | 'huge' | 'dominant' | 'single' | 'flat';

/** Rows cycle through `kinds`: N(0, 2) logits, ±1e4, one dominant token, one allowed token, all equal. */
export function logitCase(rows: number, V: number, seed: number, kinds: RowKind[] = ['normal']): LogitCase {
  const rng = createRng(seed);
  const z = new Float32Array(rows * V);
  const seq = new Int32Array(2 * rows + 2);
  const rowPos = Uint32Array.from({ length: rows }, (_, r) => 2 * r + 1);
  for (let r = 0; r < rows; r++) {
    const kind = kinds[r % kinds.length]!;
    const keep = rng.int(V);
    for (let v = 0; v < V; v++) {
      let x: number;
      if (kind === 'huge') x = rng.next() < 0.5 ? 1e4 : -1e4 * rng.next();
      else if (kind === 'dominant') x = v === keep ? 60 : rng.normal();
      else if (kind === 'flat') x = 0.25;
      else x = rng.normal() * 2;
      const masked = kind === 'single' ? v !== keep : v !== keep && rng.next() < 0.3;
      z[r * V + v] = masked ? MASKED_LOGIT : x;
    }
    // The sampled token is an allowed one (sometimes the least likely, to stress logp).
    const allowed: number[] = [];
    for (let v = 0; v < V; v++) if (z[r * V + v] !== MASKED_LOGIT) allowed.push(v);
    seq[rowPos[r]!] = allowed[rng.int(allowed.length)]!;
  }
  return { z, V, seq, rowPos };
}

/** Largest |logit| among allowed tokens: f32 errors of log-sum-exp scale with it. */
export function maxAbsLogit(z: Float32Array): number {
  let m = 0;
  for (const x of z) if (x !== MASKED_LOGIT) m = Math.max(m, Math.abs(x));
  return m;
}
