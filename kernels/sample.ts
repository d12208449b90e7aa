/**
 * Token sampling by inverse CDF over the softmax of one row of masked logits (kernel `sample.wgsl`).
 * The uniform comes from the counter-based hash hashUniform(seed, iter, rowPos, 0), identical on
 * GPU and CPU, so both backends draw the same tokens up to f32 rounding at CDF boundaries.
 */
import { hashUniform } from '../workers/rng';
import { MASKED_LOGIT, rowLse } from './mlp';

/** Writes the sampled token of row r into seq[rowPos[r]]. */
export function sampleCpu(
  z: Float32Array,
  V: number,
  rowPos: Uint32Array,
  seq: Int32Array | Uint32Array,
  seed: number,
  iter: number,
): void {
  for (let r = 0; r < rowPos.length; r++) {
    const off = r * V;
    const lse = rowLse(z, off, V);
    const u = hashUniform(seed, iter, rowPos[r]!, 0);
    let cum = 0;
    let pick = -1;
    let last = 0;
    for (let v = 0; v < V; v++) {
      if (z[off + v] === MASKED_LOGIT) continue;
      last = v;
      cum += Math.exp(z[off + v]! - lse);
      if (u < cum) {
        pick = v;
        break;
      }
    }
    // Rounding can leave the total just under u: take the last allowed token.
    seq[rowPos[r]!] = pick >= 0 ? pick : last;
  }
}
