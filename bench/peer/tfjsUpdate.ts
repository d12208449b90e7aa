/**
 * The peer of section 3: the same update step as workers/core/cpuBackend.ts update(), written with
 * TensorFlow.js ops and autodiff, on whichever TF.js backend is active (webgpu, wasm or cpu):
 *
 *   logp_old, logp_ref = log-softmax log-probs of the sampled tokens under the current and the
 *     reference weights (MLP over the last K token embeddings, grammar-masked, / temperature)
 *   A = GRPO group advantage (mean, optional std scaling, eps), broadcast to the tokens x mask
 *   per epoch x minibatch: loss = sum_rows w * (clipped surrogate with dual clip + klCoef * k3),
 *     gradients by tf.variableGrads, global-norm clipping, tf.train.adam (same beta1, beta2, eps, lr)
 *   one readback: the loss (mean over the last epoch's minibatches) and the last gradient norm.
 *
 * The first layer is written two ways. `direct`: gather the K context embeddings of each row and
 * multiply by W1 (R*K*D*H multiply-adds per pass). `factored`: the same math as our backends
 * (kernels/model/mlp.ts embedProjectCpu): proj[k, t] = emb[t] W1_k once per weight set by a batched
 * matmul, then each row sums the K entries of its context tokens (K*V*D*H + R*K*H). Measuring both
 * separates what the algorithm gains from what the kernels gain.
 *
 * The batch's index tensors (context tokens, previous tokens, actions) are made once per batch by
 * setBatch(), as the GPU backend gets its token buffer during the rollout; update() uploads the
 * rewards, mask and weights as the GPU backend's update does.
 */
import * as tf from '@tensorflow/tfjs-core';
// Gradients of every op (tfjs-core alone registers none; the tfjs umbrella package does this).
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import { contextToken, MASKED_LOGIT, paramLayout } from '../../kernels/model/mlp';
import type { RunShape, UpdateInput } from '../../workers/core/backend';
import { ratioSlots } from '../../workers/core/plan';

export interface TfUpdateResult {
  loss: number;
  /** Gradient norm of the last optimizer step, before clipping (as the backends report it). */
  gradNorm: number;
}

export type FirstLayer = 'direct' | 'factored';

export interface TfPeer {
  /** How the embedding (or table) lookup is written on this backend. */
  readonly embeddingLookup: 'gather' | 'one-hot matmul';
  readonly firstLayer: FirstLayer;
  setBatch(seq: Int32Array): void;
  update(inp: UpdateInput): Promise<TfUpdateResult>;
  dispose(): void;
}

export function createTfPeer(
  shape: RunShape,
  params: Float32Array,
  refParams: Float32Array = params,
  firstLayer: FirstLayer = 'direct',
): TfPeer {
  const { dims, N, L, Tp } = shape;
  const V = dims.V;
  const R = N * Tp;
  const init = weightTensors(dims, params);
  const vars = trainable(init);
  Object.values(init).forEach((t) => t.dispose());
  const ref = weightTensors(dims, refParams);
  const grammar = tf.tensor2d(Float32Array.from(shape.grammar), [V, V]);
  const optimizer = tf.train.adam(1, shape.optim.beta1, shape.optim.beta2, shape.optim.eps);
  // The peer implements the token ratio's clip (the bench's shapes are GRPO's).
  const { clipLow, clipHigh, dualClip } = ratioSlots(shape.loss.ratio);
  const loLog = Math.max(Math.log(1 - clipLow), -3.4e38);
  const hiLog = Math.log(1 + clipHigh);
  const { klCoef } = shape.loss;
  // The embedding lookup: tf.gather where the backend can differentiate it (its gradient is
  // UnsortedSegmentSum, which tfjs-backend-wasm 4.22 lacks), else a one-hot matmul (same values).
  const gatherable = tf.getKernel('UnsortedSegmentSum', tf.getBackend()) !== undefined;
  let batch: PeerBatch | null = null;

  const logProbs = (w: Weights, r0: number, r1: number) => rowLogProbs({ shape, batch: batch!, grammar, firstLayer }, w, r0, r1);

  function disposeBatch(): void {
    if (!batch) return;
    batch.ctx.dispose();
    batch.ctxOneHot?.dispose();
    batch.slot.dispose();
    batch.slotCounts?.dispose();
    batch.prev.dispose();
    batch.onehot.dispose();
    batch = null;
  }

  return {
    setBatch(seq) {
      if (seq.length !== N * L) throw new Error(`tfjs peer: ${seq.length} tokens, expected ${N * L}`);
      disposeBatch();
      batch = peerBatch(shape, seq, gatherable, firstLayer);
    },

    async update(inp) {
      if (!batch) throw new Error('tfjs peer: setBatch() first');
      (optimizer as unknown as { learningRate: number }).learningRate = inp.lr;
      const out = tf.tidy(() => {
        const rewards = tf.tensor1d(inp.adv.reward);
        const mask = tf.tensor2d(inp.mask, [N, Tp]);
        const weights = tf.tensor1d(inp.weights);
        const logpOld = logProbs(vars, 0, R);
        const logpRef = logProbs(ref, 0, R);
        const adv = grpoAdvantage(shape, rewards, mask);
        let lossSum: tf.Scalar = tf.scalar(0);
        let norm: tf.Scalar = tf.scalar(0);
        for (let epoch = 0; epoch < shape.epochs; epoch++) {
          if (epoch === shape.epochs - 1) lossSum = tf.scalar(0);
          for (const [n0, n1] of shape.minibatches) {
            const [r0, r1] = [n0 * Tp, n1 * Tp];
            const n = r1 - r0;
            const A = tf.slice(adv, [r0], [n]);
            const old = tf.slice(logpOld, [r0], [n]);
            const w = tf.slice(weights, [r0], [n]);
            const f = () => {
              const logp = logProbs(vars, r0, r1);
              return tf.sum(tf.mul(w, tokenLoss(logp, old, tf.slice(logpRef, [r0], [n]), A, { loLog, hiLog, dualClip, klCoef }))) as tf.Scalar;
            };
            const { value, grads } = tf.variableGrads(f, Object.values(vars) as tf.Variable[]);
            const gs = Object.values(grads);
            norm = tf.sqrt(tf.addN(gs.map((g) => tf.sum(tf.square(g))))) as tf.Scalar;
            const scale =
              shape.optim.maxGradNorm > 0 ? tf.minimum(1, tf.div(shape.optim.maxGradNorm, tf.add(norm, 1e-6))) : tf.scalar(1);
            optimizer.applyGradients(Object.entries(grads).map(([name, g]) => ({ name, tensor: tf.mul(g, scale) })));
            if (epoch === shape.epochs - 1) lossSum = tf.add(lossSum, value);
          }
        }
        return tf.stack([tf.div(lossSum, shape.minibatches.length), norm]);
      });
      const v = await out.data();
      out.dispose();
      return { loss: v[0]!, gradNorm: v[1]! };
    },

    embeddingLookup: gatherable ? 'gather' : 'one-hot matmul',
    firstLayer,

    dispose() {
      disposeBatch();
      Object.values(vars).forEach((t) => t.dispose());
      Object.values(ref).forEach((t) => t.dispose());
      grammar.dispose();
      optimizer.dispose();
    },
  };
}

/** The batch's per-row tensors: contexts, previous and sampled tokens, in the first layer's form. */
interface PeerBatch {
  ctx: tf.Tensor2D;
  ctxOneHot: tf.Tensor2D | null;
  /** Factored: table row k*V + ctx_k(r) per (row, slot), [R, K] for gather... */
  slot: tf.Tensor2D;
  /** ... or, without a differentiable gather, [R, K*V] with K ones per row (the row sums by one matmul). */
  slotCounts: tf.Tensor2D | null;
  prev: tf.Tensor1D;
  onehot: tf.Tensor2D;
}

function peerBatch(shape: RunShape, seq: Int32Array, gatherable: boolean, firstLayer: FirstLayer): PeerBatch {
  const { N, L, Tp } = shape;
  const { V, K } = shape.dims;
  const R = N * Tp;
  const ctx = new Int32Array(R * K);
  const prev = new Int32Array(R);
  const act = new Int32Array(R);
  for (let r = 0; r < R; r++) {
    const pos = shape.trainRowPos[r]!;
    for (let k = 0; k < K; k++) ctx[r * K + k] = contextToken(seq, pos, L, K, k);
    prev[r] = pos % L === 0 ? 0 : seq[pos - 1]!;
    act[r] = seq[pos]!;
  }
  const ctxT = tf.tensor2d(ctx, [R, K], 'int32');
  const direct = firstLayer === 'direct';
  const ctxOneHot = gatherable || !direct ? null : tf.tidy(() => tf.cast(tf.oneHot(tf.reshape(ctxT, [R * K]) as tf.Tensor1D, V), 'float32') as tf.Tensor2D);
  const slot = Int32Array.from(ctx, (t, i) => (i % K) * V + t);
  let slotCounts: tf.Tensor2D | null = null;
  if (!gatherable && !direct) {
    const counts = new Float32Array(R * K * V);
    slot.forEach((s, i) => (counts[Math.floor(i / K) * K * V + s] = 1));
    slotCounts = tf.tensor2d(counts, [R, K * V]);
  }
  const onehot = tf.tidy(() => tf.cast(tf.oneHot(tf.tensor1d(act, 'int32'), V), 'float32') as tf.Tensor2D);
  return { ctx: ctxT, ctxOneHot, slot: tf.tensor2d(slot, [R, K], 'int32'), slotCounts, prev: tf.tensor1d(prev, 'int32'), onehot };
}

/** GRPO's group-normalized advantage of every row, masked. */
function grpoAdvantage(shape: RunShape, rewards: tf.Tensor1D, mask: tf.Tensor2D): tf.Tensor1D {
  const { N, Tp, group } = shape;
  const o = shape.adv;
  let a: tf.Tensor1D;
  if (group > 1) {
    const g = tf.reshape(rewards, [N / group, group]);
    const mean = tf.mean(g, 1, true);
    const ss = tf.sum(tf.square(tf.sub(g, mean)), 1, true);
    const std = tf.sqrt(tf.div(ss, o.unbiasedStd ? group - 1 : group));
    const centred = tf.sub(g, mean);
    a = tf.reshape(o.scaleStd ? tf.div(centred, tf.add(std, o.eps)) : centred, [N]) as tf.Tensor1D;
  } else {
    a = o.scaleStd ? (tf.div(rewards, 1 + o.eps) as tf.Tensor1D) : rewards;
  }
  return tf.reshape(tf.mul(tf.reshape(a, [N, 1]), mask), [N * Tp]) as tf.Tensor1D;
}

/** The clipped token surrogate with the dual clip, plus the k3 KL: each row's loss. */
function tokenLoss(logp: tf.Tensor1D, old: tf.Tensor1D, logpRef: tf.Tensor1D, A: tf.Tensor1D, o: { loLog: number; hiLog: number; dualClip: number; klCoef: number }): tf.Tensor1D {
  const logR = tf.clipByValue(tf.sub(logp, old), -20, 20);
  const r = tf.exp(logR);
  const rc = tf.exp(tf.clipByValue(logR, o.loLog, o.hiLog));
  const negA = tf.neg(A);
  const lc = tf.maximum(tf.mul(negA, r), tf.mul(negA, rc));
  let l = tf.where(tf.less(A, 0), tf.minimum(lc, tf.mul(negA, o.dualClip)), lc);
  if (o.klCoef !== 0) {
    const k = tf.clipByValue(tf.sub(logpRef, logp), -20, 20);
    const k3 = tf.clipByValue(tf.sub(tf.sub(tf.exp(k), k), 1), -10, 10);
    l = tf.add(l, tf.mul(k3, o.klCoef));
  }
  return l as tf.Tensor1D;
}

/** The MLP's parameter blocks as tensors (kernels/model/mlp.ts paramLayout). */
function weightTensors(dims: RunShape['dims'], p: Float32Array) {
  const { V, K, D, H } = dims;
  const P = paramLayout(dims);
  return {
    emb: tf.tensor2d(p.subarray(P.emb, P.emb + V * D), [V, D]),
    w1: tf.tensor2d(p.subarray(P.w1, P.w1 + K * D * H), [K * D, H]),
    b1: tf.tensor1d(p.subarray(P.b1, P.b1 + H)),
    w2: tf.tensor2d(p.subarray(P.w2, P.w2 + H * V), [H, V]),
    b2: tf.tensor1d(p.subarray(P.b2, P.b2 + V)),
  };
}
type Weights = ReturnType<typeof weightTensors>;

interface PeerRows {
  shape: RunShape;
  batch: PeerBatch;
  /** [V, V] 0/1 allowed[prev, next]. */
  grammar: tf.Tensor2D;
  firstLayer: FirstLayer;
}

/** x W1 for rows [r0, r0 + n): [n, H]. */
function firstLayerOf({ shape, batch: b, firstLayer }: PeerRows, w: Weights, r0: number, n: number): tf.Tensor2D {
  const { V, K, D, H } = shape.dims;
  if (firstLayer === 'factored') {
    // proj [K*V, H]: emb [V, D] times each slot's block of W1, as one batched matmul.
    const embK = tf.tile(tf.reshape(w.emb, [1, V, D]), [K, 1, 1]) as tf.Tensor3D;
    const proj = tf.reshape(tf.matMul(embK, tf.reshape(w.w1, [K, D, H]) as tf.Tensor3D), [K * V, H]) as tf.Tensor2D;
    if (b.slotCounts) return tf.matMul(tf.slice(b.slotCounts, [r0, 0], [n, K * V]), proj);
    const rows = tf.gather(proj, tf.reshape(tf.slice(b.slot, [r0, 0], [n, K]), [n * K]));
    return tf.sum(tf.reshape(rows, [n, K, H]), 1) as tf.Tensor2D;
  }
  const rows = b.ctxOneHot
    ? tf.matMul(tf.slice(b.ctxOneHot, [r0 * K, 0], [n * K, V]), w.emb)
    : tf.gather(w.emb, tf.reshape(tf.slice(b.ctx, [r0, 0], [n, K]), [n * K]));
  return tf.matMul(tf.reshape(rows, [n, K * D]), w.w1);
}

/** Log-probs of the sampled tokens of rows [r0, r1). */
function rowLogProbs(x: PeerRows, w: Weights, r0: number, r1: number): tf.Tensor1D {
  const b = x.batch;
  const n = r1 - r0;
  const V = x.shape.dims.V;
  const h = tf.tanh(tf.add(firstLayerOf(x, w, r0, n), w.b1));
  const zRaw = tf.div(tf.add(tf.matMul(h, w.w2), w.b2), x.shape.temperature);
  const allowed = tf.gather(x.grammar, tf.slice(b.prev, [r0], [n]));
  // Forbidden tokens get MASKED_LOGIT exactly (exp underflows to 0) and no gradient.
  const z = tf.add(tf.mul(zRaw, allowed), tf.mul(tf.sub(1, allowed), MASKED_LOGIT));
  const lsm = tf.logSoftmax(z);
  return tf.sum(tf.mul(lsm, tf.slice(b.onehot, [r0, 0], [n, V])), 1) as tf.Tensor1D;
}

/** Trainable copies of the weights (the optimizer's variables). */
function trainable(w: Weights): Weights {
  return { emb: tf.variable(w.emb, true), w1: tf.variable(w.w1, true), b1: tf.variable(w.b1, true), w2: tf.variable(w.w2, true), b2: tf.variable(w.b2, true) };
}
