/** Seeded inputs for the MLP kernel tests: parameters, token sequences, row positions, a grammar. */
import { paramLayout, type MlpDims } from '../../kernels/mlp';
import type { Rng } from '../../workers/rng';

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

/** Sizes that break tail guards and multi-workgroup paths (STYLE.md 10.8 step 5). */
export function edgeSizes(workgroupSize: number, large: number): number[] {
  return [1, workgroupSize - 1, workgroupSize, workgroupSize + 1, 123, large];
}
