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
  /** [N] how many times each trajectory counts (PF-PPO's resampling); default 1. */
  mult?: Float32Array,
): Float32Array {
  const w = new Float32Array(mask.length);
  const c = (n: number) => (mult ? mult[n]! : 1);
  for (const [n0, n1] of minibatches) {
    // Sequences without a policy token (padding, dropped prompts) are not part of the mean.
    let seqs = 0;
    let total = 0;
    for (let n = n0; n < n1; n++) {
      let len = 0;
      for (let j = 0; j < Tp; j++) len += mask[n * Tp + j]!;
      if (len > 0) seqs += c(n);
      total += c(n) * len;
    }
    for (let n = n0; n < n1; n++) {
      let len = 0;
      for (let j = 0; j < Tp; j++) len += mask[n * Tp + j]!;
      for (let j = 0; j < Tp; j++) {
        const i = n * Tp + j;
        if (!mask[i] || !c(n)) continue;
        switch (mode) {
          case 'token-mean':
            w[i] = c(n) / Math.max(total, 1);
            break;
          case 'seq-mean-token-mean':
            w[i] = c(n) / (Math.max(seqs, 1) * Math.max(len, 1));
            break;
          case 'seq-mean-token-sum':
            w[i] = c(n) / Math.max(seqs, 1);
            break;
          case 'seq-mean-token-sum-norm':
            // Dr. GRPO: a constant normalizer, the padded response length (TRL: B * max length).
            w[i] = c(n) / (Math.max(seqs, 1) * Tp);
            break;
        }
      }
    }
  }
  return w;
}

/** The weights restricted to the rows of one turn (SeeUPO's per-turn stages), same aggregation. */
export function turnMask(mask: Float32Array, Tp: number, actionLen: number, turn: number): Float32Array {
  return mask.map((m, i) => (Math.floor((i % Tp) / actionLen) === turn ? m : 0));
}

/** Trajectory ranges of M contiguous minibatches over N trajectories. */
export function minibatchRanges(N: number, M: number): Array<[number, number]> {
  const m = Math.max(1, Math.min(M, N));
  return Array.from({ length: m }, (_, i) => [Math.floor((i * N) / m), Math.floor(((i + 1) * N) / m)] as [number, number]);
}
