/**
 * The rollout correction (docs/METHODS.md 5.19): once the old log-probs are known, IS weights and
 * rejection of the sampler's tokens, as verl computes them before its advantage
 * (compute_rollout_correction_and_rejection_mask, kernels/loss/rolloutCorrection.ts). Both
 * backends compute them on the host with that reference, in float64, from the same f32 log-probs:
 * the GPU reads ℓ^old and ℓ^μ back between two submits (the one update whose work is split), which
 * keeps the weights bit for bit the reference's instead of a second implementation of its batch
 * means, sums, maxima and option parsing in WGSL. The result is what the later stages read:
 * - the loss mask with the rejected tokens out: the advantage, whitening, statistics and the
 *   aggregation's counts see them as absent (verl replaces response_mask, so its token-mean
 *   divides by the kept tokens; a rollout rejected whole is no sequence of seq-mean-*);
 * - the aggregation weights over that mask (lossAgg.ts lossWeights, as the trainer made them);
 * - the IS weights, which the loss multiplies into each row's policy term, stopped, and not into
 *   its KL term (ppoLoss.ts): verl's pg_losses * rollout_is_weights. GMPO's sequence objective
 *   takes the geometric mean of its trajectory's weights instead, as verl's geo_mean loss does.
 * The collected mask stays the mismatch statistics' (verl measures the mismatch on the original
 * mask) and the batch dump's, which carries each token's IS weight and whether it was kept.
 */
import { rolloutCorrection as rolloutCorrectionRef } from '../../../kernels/loss/rolloutCorrection';
import type { RunShape, UpdateInput } from '../backend';
import { lossWeights } from '../lossAgg';
import type { UpdateStage } from './stage';

/** What the correction hands the later stages and the dump. */
export interface CorrectedBatch {
  /** [N * Tp] the loss mask with the rejected tokens out. */
  mask: Float32Array;
  weights: Float32Array;
  stageWeights?: Float32Array[];
  /** [N * Tp] the IS weights the loss applies (GMPO: the trajectory's geometric mean), or null without an IS level. */
  lossIsWeight: Float32Array | null;
  /** [N * Tp] the reference's IS weights (1 without an IS level), and 1 where a token stayed in the loss: the dump's. */
  isWeight: Float32Array;
  rsKeep: Float32Array;
}

/** verl's geo_mean loss: exp of the mean of log(w + 1e-10) over the trajectory's tokens in the loss. */
const GEO_EPS = 1e-10;

/** The correction of one update's batch from its old and rollout log-probs ([N * Tp] each). */
export function correctBatch(shape: RunShape, inp: UpdateInput, logpOld: Float32Array, logpRollout: Float32Array): CorrectedBatch {
  const cfg = shape.correction!;
  const Tp = shape.Tp;
  const R = shape.N * Tp;
  // A batch without a policy token (every group filtered) has nothing to correct; the reference
  // refuses it, as verl does.
  if (!inp.mask.some((m) => m !== 0)) {
    return { mask: inp.mask, weights: inp.weights, ...(inp.stageWeights ? { stageWeights: inp.stageWeights } : {}), lossIsWeight: null, isWeight: new Float32Array(R).fill(1), rsKeep: Float32Array.from(inp.mask) };
  }
  const c = rolloutCorrectionRef(logpOld, logpRollout, inp.mask, Tp, cfg);
  const mask = Float32Array.from(c.mask);
  const { weights, stageWeights } = lossWeights(shape, mask, inp.mult);
  let lossIsWeight: Float32Array | null = null;
  if (c.weights) {
    // From the f32 weights the dump carries, so that its reader rederives GMPO's mean exactly.
    const w = Float32Array.from(c.weights);
    if (shape.loss.ratio.mode === 'geometric') {
      lossIsWeight = new Float32Array(R);
      for (let n = 0; n < shape.N; n++) {
        let s = 0;
        let k = 0;
        for (let i = n * Tp; i < (n + 1) * Tp; i++) if (mask[i]) {
          s += Math.log(w[i]! + GEO_EPS);
          k++;
        }
        lossIsWeight.fill(k > 0 ? Math.exp(s / k) : 1, n * Tp, (n + 1) * Tp);
      }
    } else lossIsWeight = Float32Array.from(w);
  }
  return {
    mask,
    weights,
    ...(stageWeights ? { stageWeights } : {}),
    lossIsWeight,
    isWeight: c.weights ? Float32Array.from(c.weights) : Float32Array.from(inp.mask),
    rsKeep: mask,
  };
}

/** The update's input after the correction: what the stages after it read. */
function applyTo(inp: UpdateInput, out: CorrectedBatch): void {
  inp.mask = out.mask;
  inp.weights = out.weights;
  if (out.stageWeights) inp.stageWeights = out.stageWeights;
  if (out.lossIsWeight) inp.isWeight = out.lossIsWeight;
}

/** The rollout correction's stage: between the log-probs and the advantage, as verl orders them. */
export const rolloutCorrection: UpdateStage = {
  name: 'rolloutCorrection',
  phase: 'prepare',
  part: 'correction',
  reads: ['mask', 'weights', 'stageWeights', 'mult', 'logpOld', 'logpRollout'],
  writes: ['mask', 'weights', 'stageWeights'],
  kernels: [],
  reference: 'kernels/loss/rolloutCorrection.ts: rolloutCorrection',
  enabled: (s) => !!s.correction,
  pipelines: () => [],
  gpu({ device, shape, b, mapRead, host }) {
    const R = shape.N * shape.Tp;
    const read = mapRead('rollout correction readback', 2 * R);
    const isHalf = !!shape.correction?.rolloutIs;
    const ones = new Float32Array(R).fill(1);
    const writeWeights = (buf: GPUBuffer, w: Float32Array, isw: Float32Array | null) => {
      device.queue.writeBuffer(buf, 0, w);
      if (isHalf) device.queue.writeBuffer(buf, 4 * R, isw ?? ones);
    };
    return {
      upload() {
        // An update that skips the host step (none does today) then weighs every row by 1.
        if (isHalf) for (const buf of [b.weights, ...b.stageWeights]) device.queue.writeBuffer(buf, 4 * R, ones);
      },
      encode() {},
      host: {
        read,
        copy(enc) {
          enc.copyBufferToBuffer(b.logpOld, 0, read, 0, 4 * R);
          enc.copyBufferToBuffer(b.logpRollout, 0, read, 4 * R, 4 * R);
        },
        apply(bytes, inp) {
          const out = correctBatch(shape, inp, new Float32Array(bytes, 0, R), new Float32Array(bytes, 4 * R, R));
          device.queue.writeBuffer(b.mask, 0, out.mask);
          writeWeights(b.weights, out.weights, out.lossIsWeight);
          b.stageWeights.forEach((buf, k) => writeWeights(buf, out.stageWeights![k]!, out.lossIsWeight));
          host.corrected = { isWeight: out.isWeight, rsKeep: out.rsKeep };
          applyTo(inp, out);
        },
      },
    };
  },
  cpu(c, inp) {
    const out = correctBatch(c.shape, inp, c.t.logpOld, c.t.logpRollout);
    c.sampledMask = inp.mask;
    c.t.isWeight!.set(out.isWeight);
    c.t.rsKeep!.set(out.rsKeep);
    applyTo(inp, out);
  },
};
