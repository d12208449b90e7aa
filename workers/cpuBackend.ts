/**
 * The CPU backend: the same update as the GPU backend, computed by the kernels' TypeScript
 * references. It is the fallback where WebGPU is missing and the oracle in tests.
 */
import { adamCpu, gradNormCpu } from '../kernels/adam';
import { HEALTH, nonFiniteCpu } from '../kernels/finiteCheck';
import { grpoAdvantageCpu } from '../kernels/advantage';
import { backwardCpu, forwardCpu, logitGradCpu, paramLayout } from '../kernels/mlp';
import { ppoLossCpu } from '../kernels/ppoLoss';
import { sampleCpu } from '../kernels/sample';
import { statsCpu } from '../kernels/stats';
import { tokenStatsCpu } from '../kernels/tokenStats';
import type { Backend, BatchTensors, RunShape, UpdateInput, UpdateStats } from './backend';

export function createCpuBackend(shape: RunShape, initialParams: Float32Array): Backend {
  const { dims, N, L, Tp } = shape;
  const P = paramLayout(dims).size;
  const R = N * Tp;
  const params = Float32Array.from(initialParams);
  const ref = Float32Array.from(initialParams);
  const m = new Float32Array(P);
  const v = new Float32Array(P);
  let adamStep = 0;
  const seq = new Int32Array(N * L);
  const t: BatchTensors = {
    seq,
    logp: new Float32Array(R),
    logpOld: new Float32Array(R),
    logpRef: new Float32Array(R),
    entropy: new Float32Array(R),
    sumP2: new Float32Array(R),
    adv: new Float32Array(R),
    ratio: new Float32Array(R),
    clip: new Int32Array(R),
    loss: new Float32Array(R),
  };
  const kl = new Float32Array(R);

  const forward = (p: Float32Array, rowPos: Uint32Array) =>
    forwardCpu(p, dims, seq, L, rowPos, shape.grammar, shape.temperature);

  return {
    kind: 'cpu',
    label: 'CPU (TypeScript reference kernels)',
    writeSequences(s) {
      seq.set(s);
    },
    async sampleTurn(turn, iter) {
      const out = new Int32Array(N * shape.actionLen);
      for (let a = 0; a < shape.actionLen; a++) {
        const rowPos = shape.rolloutRowPos[turn * shape.actionLen + a]!;
        const { z } = forward(params, rowPos);
        sampleCpu(z, dims.V, rowPos, seq, shape.seed, iter);
        for (let n = 0; n < N; n++) out[n * shape.actionLen + a] = seq[rowPos[n]!]!;
      }
      return out;
    },
    writeTurn(turn, tokens) {
      const w = shape.actionLen + shape.obsLen;
      const start = shape.promptLen + turn * w;
      for (let n = 0; n < N; n++) seq.set(tokens.subarray(n * w, (n + 1) * w), n * L + start);
    },
    async update(inp: UpdateInput): Promise<UpdateStats> {
      const rows = shape.trainRowPos;
      // ALGO LOGIC: old and reference log-probs of the sampled tokens.
      const refOut = forward(ref, rows);
      t.logpRef.set(tokenStatsCpu(refOut.z, dims.V, seq, rows).logp);
      // Also the first optimizer step's forward: same params, and rows are independent.
      const old = forward(params, rows);
      t.logpOld.set(tokenStatsCpu(old.z, dims.V, seq, rows).logp);
      t.adv.set(grpoAdvantageCpu(inp.rewards, inp.mask, Tp, { group: shape.group, ...shape.grpo }));

      let gradNorm = 0;
      let health = 0;
      const firstStep = adamStep;
      for (let epoch = 0; epoch < shape.epochs; epoch++) {
        for (const [n0, n1] of shape.minibatches) {
          const [r0, r1] = [n0 * Tp, n1 * Tp];
          const mbRows = rows.subarray(r0, r1);
          const f =
            adamStep === firstStep
              ? { h: old.h.subarray(r0 * dims.H, r1 * dims.H), z: old.z.subarray(r0 * dims.V, r1 * dims.V) }
              : forward(params, mbRows);
          const ts = tokenStatsCpu(f.z, dims.V, seq, mbRows);
          t.logp.set(ts.logp, r0);
          t.entropy.set(ts.entropy, r0);
          t.sumP2.set(ts.sumP2, r0);
          const lo = ppoLossCpu(
            ts.logp,
            t.logpOld.subarray(r0, r1),
            t.logpRef.subarray(r0, r1),
            t.adv.subarray(r0, r1),
            inp.weights.subarray(r0, r1),
            shape.loss,
          );
          t.loss.set(lo.loss, r0);
          t.ratio.set(lo.ratio, r0);
          t.clip.set(lo.clip, r0);
          kl.set(lo.kl, r0);
          const dz = logitGradCpu(f.z, dims.V, seq, mbRows, lo.dlogp, shape.temperature);
          const grads = backwardCpu(params, dims, seq, L, mbRows, f.h, dz);
          gradNorm = gradNormCpu(grads);
          adamStep++;
          const applied = adamCpu(params, grads, m, v, gradNorm, {
            lr: inp.lr,
            beta1: shape.optim.beta1,
            beta2: shape.optim.beta2,
            eps: shape.optim.eps,
            step: adamStep,
            maxGradNorm: shape.optim.maxGradNorm,
          });
          if (!applied) health |= HEALTH.gradients;
        }
      }
      if (nonFiniteCpu(t.logp) || nonFiniteCpu(t.loss) || nonFiniteCpu(t.ratio)) health |= HEALTH.loss;
      if (nonFiniteCpu(params)) health |= HEALTH.parameters;
      // PLUMBING: statistics for the charts.
      const stats = statsCpu({
        mask: inp.mask,
        adv: t.adv,
        logp: t.logp,
        logpOld: t.logpOld,
        entropy: t.entropy,
        kl,
        clip: t.clip,
        loss: t.loss,
        rewards: inp.rewards,
        group: shape.group,
        Tp,
        minibatches: shape.minibatches.length,
      });
      const state = inp.snapshot
        ? { params: Float32Array.from(params), ref: Float32Array.from(ref), m: Float32Array.from(m), v: Float32Array.from(v), adamStep }
        : undefined;
      return { ...stats, grad_norm: gradNorm, non_finite: health, ...(state ? { state } : {}) };
    },
    async readParams() {
      return Float32Array.from(params);
    },
    async snapshot() {
      return { params: Float32Array.from(params), ref: Float32Array.from(ref), m: Float32Array.from(m), v: Float32Array.from(v), adamStep };
    },
    restore(st) {
      params.set(st.params);
      ref.set(st.ref);
      m.set(st.m);
      v.set(st.v);
      adamStep = st.adamStep;
    },
    injectNaN() {
      params[0] = NaN;
    },
    async readBatch() {
      return structuredClone(t);
    },
    destroy() {},
  };
}
