/**
 * Loss aggregation as per-token weights (docs/METHODS.md 1.3, verl `agg_loss`): every mode is a linear
 * combination of token losses, so each token gets a weight and a minibatch's loss is sum(w * L).
 * Weights are normalized within each minibatch; masked tokens weigh 0.
 */
import type { RunShape, UpdateInput } from './backend';
import type { LossAgg } from './config';

/**
 * The aggregation weights of a run's loss over `mask` (and SeeUPO's, one set per turn stage): the
 * trainer's for the collected batch, the rollout correction's again after its rejection.
 */
export function lossWeights(
  shape: Pick<RunShape, 'Tp' | 'minibatches' | 'actionLen' | 'maxTurns' | 'loss'>,
  mask: Float32Array,
  mult?: Float32Array,
): Pick<UpdateInput, 'weights' | 'stageWeights'> {
  const { Tp, minibatches, loss } = shape;
  const segLen = loss.stepRows ? shape.actionLen : Tp;
  const weights = aggregationWeights(mask, Tp, minibatches, loss.agg, mult, segLen);
  if (loss.ratio.mode !== 'turn') return { weights };
  const stageWeights = Array.from({ length: shape.maxTurns }, (_, k) => aggregationWeights(turnMask(mask, Tp, shape.actionLen, k), Tp, minibatches, loss.agg, mult, segLen));
  return { weights, stageWeights };
}

export function aggregationWeights(
  mask: Float32Array,
  Tp: number,
  minibatches: Array<[number, number]>,
  mode: LossAgg,
  /** [N] how many times each trajectory counts (PF-PPO's resampling); default 1. */
  mult?: Float32Array,
  /**
   * Rows of one "sequence": Tp (a trajectory), or a turn's actionLen where the rows are steps
   * (GiGPO/SAMPO's reference code trains on one row per step, so its means are over steps).
   */
  segLen: number = Tp,
): Float32Array {
  if (!(segLen >= 1 && Tp % segLen === 0)) throw new Error(`aggregationWeights: segment of ${segLen} rows does not divide Tp = ${Tp}`);
  const w = new Float32Array(mask.length);
  const per = Tp / segLen;
  // Every weight of a segment is the same number: worked out once per segment, outside the row
  // loop. The trainer calls this once per iteration on every row (73,728 at 64x), where the
  // per-row version took 11 ms, most of the host time between a rollout and its update.
  const lens = new Float64Array(minibatches.reduce((a, [n0, n1]) => Math.max(a, n1 - n0), 0) * per);
  for (const [n0, n1] of minibatches) {
    // Sequences without a policy token (padding, dropped prompts, turns not taken) are not part of the mean.
    let seqs = 0;
    let total = 0;
    for (let n = n0; n < n1; n++) {
      const c = mult ? mult[n]! : 1;
      for (let s = 0; s < per; s++) {
        let len = 0;
        const r0 = n * Tp + s * segLen;
        for (let j = r0; j < r0 + segLen; j++) len += mask[j]!;
        lens[(n - n0) * per + s] = len;
        if (len > 0) seqs += c;
        total += c * len;
      }
    }
    for (let n = n0; n < n1; n++) {
      const c = mult ? mult[n]! : 1;
      if (!c) continue;
      for (let s = 0; s < per; s++) {
        const x = trajectoryWeight(mode, c, lens[(n - n0) * per + s]!, seqs, total, segLen);
        const r0 = n * Tp + s * segLen;
        for (let i = r0; i < r0 + segLen; i++) if (mask[i]) w[i] = x;
      }
    }
  }
  return w;
}

/** The weight of each policy token of a sequence counted c times with len tokens, in a minibatch of seqs sequences and total tokens. */
function trajectoryWeight(mode: LossAgg, c: number, len: number, seqs: number, total: number, Tp: number): number {
  switch (mode) {
    case 'token-mean':
      return c / Math.max(total, 1);
    case 'seq-mean-token-mean':
      return c / (Math.max(seqs, 1) * Math.max(len, 1));
    case 'seq-mean-token-sum':
      return c / Math.max(seqs, 1);
    case 'seq-mean-token-sum-norm':
      // Dr. GRPO: a constant normalizer, the padded response length (TRL: B * max length).
      return c / (Math.max(seqs, 1) * Tp);
  }
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
