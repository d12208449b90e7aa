/**
 * Loss aggregation as per-token weights (METHODS.md 1.3, verl `agg_loss`): every mode is a linear
 * combination of token losses, so each token gets a weight and a minibatch's loss is sum(w * L).
 * Weights are normalized within each minibatch; masked tokens weigh 0.
 */
import type { LossAgg } from './config';

export function aggregationWeights(
  mask: Float32Array,
  Tp: number,
  minibatches: Array<[number, number]>,
  mode: LossAgg,
): Float32Array {
  const w = new Float32Array(mask.length);
  for (const [n0, n1] of minibatches) {
    const seqs = n1 - n0;
    let total = 0;
    for (let i = n0 * Tp; i < n1 * Tp; i++) total += mask[i]!;
    for (let n = n0; n < n1; n++) {
      let len = 0;
      for (let j = 0; j < Tp; j++) len += mask[n * Tp + j]!;
      for (let j = 0; j < Tp; j++) {
        const i = n * Tp + j;
        if (!mask[i]) continue;
        switch (mode) {
          case 'token-mean':
            w[i] = 1 / Math.max(total, 1);
            break;
          case 'seq-mean-token-mean':
            w[i] = 1 / (seqs * Math.max(len, 1));
            break;
          case 'seq-mean-token-sum':
            w[i] = 1 / seqs;
            break;
          case 'seq-mean-token-sum-norm':
            // Dr. GRPO: a constant normalizer, the padded response length (TRL: B * max length).
            w[i] = 1 / (seqs * Tp);
            break;
        }
      }
    }
  }
  return w;
}

/** Trajectory ranges of M contiguous minibatches over N trajectories. */
export function minibatchRanges(N: number, M: number): Array<[number, number]> {
  const m = Math.max(1, Math.min(M, N));
  return Array.from({ length: m }, (_, i) => [Math.floor((i * N) / m), Math.floor(((i + 1) * N) / m)] as [number, number]);
}
