/** Seeded masked-logit rows for the per-row softmax kernels (tokenStats, logitGrad). */
import { MASKED_LOGIT } from '../../kernels/mlp';
import { createRng } from '../../workers/rng';

export interface LogitCase {
  z: Float32Array;
  V: number;
  /** Sequence holding the sampled token of row r at rowPos[r] = 2r + 1. */
  seq: Int32Array;
  rowPos: Uint32Array;
}

export type RowKind = 'normal' | 'huge' | 'dominant' | 'single' | 'flat';

/** Rows cycle through `kinds`: N(0, 2) logits, +-1e4, one dominant token, one allowed token, all equal. */
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
