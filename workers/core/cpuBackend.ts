/**
 * The CPU backend: the same update as the GPU backend, computed by the kernels' TypeScript
 * references. It is the fallback where WebGPU is missing and the oracle in tests.
 */
import { negOutShareCpu } from '../../kernels/stats/negOutShare';
import { usesSeqRatio } from './plan';
import { adamCpu, gradNormCpu } from '../../kernels/optimizer/adam';
import { HEALTH, nonFiniteCpu } from '../../kernels/stats/finiteCheck';
import { advantageCpu } from '../../kernels/advantage/advantage';
import { criticUpdateCpu, gaeCpu } from '../../kernels/advantage/critic';
import { essScaleCpu } from '../../kernels/optimizer/essScale';
import { infoGainCpu } from '../../kernels/advantage/infoGain';
import { backwardCpu, embedProjectCpu, forwardCpu, paramLayout } from '../../kernels/model/mlp';
import { logitGradCpu } from '../../kernels/softmax/logitGrad';
import { KL_TYPES, ppoLossCpu, RATIO_MODES } from '../../kernels/loss/ppoLoss';
import { sampleCpu } from '../../kernels/softmax/sample';
import { seqRatioCpu } from '../../kernels/loss/seqRatio';
import { statsCpu } from '../../kernels/stats/stats';
import { tokenBaselineCpu } from '../../kernels/advantage/tokenBaseline';
import { tokenStatsCpu } from '../../kernels/softmax/tokenStats';
import { trajStatsCpu } from '../../kernels/stats/trajStats';
import { trajGradNormCpu } from '../../kernels/model/trajGradNorm';
import { whitenCpu } from '../../kernels/advantage/whiten';
import { essOfUpdate, type Backend, type BatchTensors, type RunShape, type UpdateInput, type UpdateStats } from './backend';
import { copyRows } from './rowCopy';

export interface CpuBackendOptions {
  /**
   * Called between the stages of an iteration (each forward, backward and optimizer step) and
   * every 1,024 rows inside the forward and backward loops. Nothing yields meanwhile, so this is
   * the one way to tell the page the worker is not hung.
   */
  progress?: () => void;
  /** Refuse a run whose per-row arrays would take more (default CPU_BACKEND_MAX_BYTES). */
  maxBytes?: number;
}

/** The most the CPU backend's per-row arrays may take (cpuBackendBytes); a browser tab over it swaps or fails. */
export const CPU_BACKEND_MAX_BYTES = 4 * 2 ** 30;

/**
 * Peak bytes of an update's per-row arrays on the CPU backend: the old policy's forward (h and z,
 * kept through the update) beside the reference's (until the collector takes it), a stale
 * rollout policy's, a later optimizer step's fresh forward, logit and hidden gradients of a
 * minibatch, and the batch's own row tensors. At 1,024 prompts x 64 rollouts and 512 hidden units,
 * 3.8 GB; Node's whole process peaked at 4.1 GB there.
 */
export function cpuBackendBytes(shape: RunShape): number {
  const { H, V } = shape.dims;
  const R = shape.N * shape.Tp;
  const Rm = Math.max(...shape.minibatches.map(([n0, n1]) => (n1 - n0) * shape.Tp));
  const forwards = 2 + (shape.staleness > 0 ? 1 : 0) + (shape.minibatches.length > 1 || shape.epochs > 1 ? 1 : 0);
  return 4 * (forwards * R * (H + V + 1) + Rm * (H + V) + 16 * R + shape.scoreContexts * (H + V + 1));
}

/** A run too big for the CPU backend's memory budget (`maxBytes`), refused before allocating. */
export class CpuMemoryError extends Error {
  constructor(
    message: string,
    readonly bytes: number,
    readonly maxBytes: number,
  ) {
    super(message);
    this.name = 'CpuMemoryError';
  }
}

export function createCpuBackend(shape: RunShape, initialParams: Float32Array, opts: CpuBackendOptions = {}): Backend {
  const progress = opts.progress ?? (() => {});
  const bytes = cpuBackendBytes(shape);
  const maxBytes = opts.maxBytes ?? CPU_BACKEND_MAX_BYTES;
  if (bytes > maxBytes) {
    const gib = (b: number) => (b < 2 ** 30 ? `${Math.ceil(b / 2 ** 20)} MiB` : `${(b / 2 ** 30).toFixed(1)} GiB`);
    throw new CpuMemoryError(
      `cpu backend: ${shape.N.toLocaleString('en-US')} rollouts of ${shape.Tp} training rows with ${shape.dims.H.toLocaleString('en-US')} hidden units need about ` +
        `${gib(bytes)} for their activations and gradients, over the CPU backend's ${gib(maxBytes)}; use fewer prompts, ` +
        `a smaller group, fewer turns or fewer hidden units (the GPU backend keeps them in GPU memory)`,
      bytes,
      maxBytes,
    );
  }
  const { dims, N, L, Tp } = shape;
  const P = paramLayout(dims).size;
  const R = N * Tp;
  const params = Float32Array.from(initialParams);
  const ref = Float32Array.from(initialParams);
  const m = new Float32Array(P);
  const v = new Float32Array(P);
  let adamStep = 0;
  const seq = new Int32Array(N * L);
  const t: Omit<BatchTensors, 'logpRollout' | 'entropyOld' | 'sumP2Old' | 'kl' | 'g2'> = {
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
    turnReward: new Float32Array(N * shape.maxTurns),
  };
  const kl = new Float32Array(R);
  // Each row's gradient of its last loss evaluation: the last epoch's, for ARLArena's diagnosis.
  const dlogpRows = new Float32Array(R);
  // What the batch dump shows beyond the loss's own tensors (last update's values).
  const extra: Pick<BatchTensors, 'logpRollout' | 'entropyOld' | 'sumP2Old' | 'g2' | 'value' | 'ret' | 'answerLogp'> = {
    logpRollout: new Float32Array(R),
    entropyOld: new Float32Array(R),
    sumP2Old: new Float32Array(R),
    g2: new Float32Array(N),
  };
  // Rollouts use the parameters of `staleness` updates ago: the oldest of the last staleness + 1.
  let history: Float32Array[] = [Float32Array.from(initialParams)];
  // PPO's critic table (zeros: no value known yet).
  const critic = shape.critic ? new Float32Array(shape.critic.size) : null;
  const rolloutParams = () => (shape.staleness > 0 ? history[0]! : params);

  // The first layer's table (embedProjectCpu) per parameter array, kept until any parameters
  // change: rollouts run several forwards per iteration with the same policy, and the reference
  // changes only on a reset. `version` moves on every write to params, ref or history.
  let version = 0;
  const tables = new WeakMap<Float32Array, { version: number; proj: Float64Array }>();
  const projOf = (p: Float32Array) => {
    const hit = tables.get(p);
    if (hit?.version === version) return hit.proj;
    const proj = embedProjectCpu(p, dims);
    tables.set(p, { version, proj });
    return proj;
  };
  const forward = (p: Float32Array, rowPos: Uint32Array, tokens: Int32Array | Uint32Array = seq) =>
    forwardCpu(p, dims, tokens, L, rowPos, shape.grammar, shape.temperature, projOf(p), progress);
  const T = shape.maxTurns;
  const mode = shape.loss.ratioMode;
  const snapshotNow = () => ({
    params: Float32Array.from(params),
    ref: Float32Array.from(ref),
    m: Float32Array.from(m),
    v: Float32Array.from(v),
    adamStep,
    ...(critic ? { critic: Float32Array.from(critic) } : {}),
  });

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
        const { z } = forward(rolloutParams(), rowPos);
        sampleCpu(z, dims.V, rowPos, seq, shape.seed, iter);
        progress();
        for (let n = 0; n < N; n++) out[n * shape.actionLen + a] = seq[rowPos[n]!]!;
      }
      return out;
    },
    writeTurn(turn, tokens) {
      const w = shape.actionLen + shape.obsLen;
      const start = shape.promptLen + turn * w;
      copyRows(seq, start, L, tokens, 0, w, w, N);
    },
    async update(inp: UpdateInput): Promise<UpdateStats> {
      const rows = shape.trainRowPos;
      // ALGO LOGIC: reference, old (and, with stale rollouts, rollout) log-probs of the sampled tokens.
      const refOut = forward(ref, rows);
      t.logpRef.set(tokenStatsCpu(refOut.z, dims.V, seq, rows, refOut.firstOf).logp);
      progress();
      // Also the first optimizer step's forward: same params, and rows are independent.
      const old = forward(params, rows);
      const oldTs = tokenStatsCpu(old.z, dims.V, seq, rows, old.firstOf);
      t.logpOld.set(oldTs.logp);
      progress();
      const stale = shape.staleness > 0 ? forward(rolloutParams(), rows) : null;
      const logpRollout = stale ? tokenStatsCpu(stale.z, dims.V, seq, rows, stale.firstOf).logp : oldTs.logp;
      if (stale) progress();
      const ts = trajStatsCpu({ mask: inp.mask, logpOld: oldTs.logp, logpRollout, entropyOld: oldTs.entropy, sumP2Old: oldTs.sumP2 }, Tp);
      if (shape.adv.trueGradNorm) {
        // VCPO: each trajectory's own gradient norm under the old parameters replaces the proxy.
        const gn = { params, dims, seq, L, rowPos: rows, h: old.h, z: old.z, mask: inp.mask, temperature: shape.temperature };
        ts.g2 = trajGradNormCpu({ ...gn, logIS: ts.logIS, isCap: shape.adv.isCap }, Tp);
        progress();
      }
      extra.logpRollout.set(logpRollout);
      extra.entropyOld.set(oldTs.entropy);
      extra.sumP2Old.set(oldTs.sumP2);
      extra.g2.set(ts.g2);
      let a = inp.adv;
      if (inp.score) {
        // IGPO: the answer log-probs under the rollout policy become the earlier turns' rewards.
        const sf = forward(rolloutParams(), inp.score.rows, inp.score.seqs);
        const lp = tokenStatsCpu(sf.z, dims.V, inp.score.seqs, inp.score.rows, sf.firstOf).logp;
        extra.answerLogp = lp;
        const outcome = Float32Array.from(a.turns, (Tn, n) => (Tn > 0 ? a.turnReward[n * T + Tn - 1]! : 0));
        a = { ...a, turnReward: infoGainCpu(lp, shape.scoreSpan, a.turns, outcome, T, shape.igType) };
      }
      t.turnReward.set(a.turnReward);
      const advIn = { ...a, trajStats: ts, mask: inp.mask, logpOld: t.logpOld, logpRef: t.logpRef };
      const advShape = { numTraj: N, tp: Tp, maxTurns: T, actionLen: shape.actionLen, nRoles: shape.nRoles };
      const gae = critic && shape.critic && !inp.raw ? gaeCpu(critic, inp.stateKey!, inp.mask, a.reward, Tp, shape.critic) : null;
      if (gae && critic) {
        extra.value = Float32Array.from(inp.stateKey!, (key) => critic[key]!);
        extra.ret = gae.ret;
      }
      if (gae && critic && shape.critic) criticUpdateCpu(critic, inp.stateKey!, inp.mask, gae.ret, shape.critic.lr);
      let adv = inp.raw
        ? advantageCpu(advIn, { ...shape.adv, estimator: 'raw', byRole: false, entropyScale: false }, advShape)
        : gae
          ? gae.adv
          : shape.adv.otb
          ? tokenBaselineCpu({ reward: a.reward, groupStart: a.groupStart, groupSize: a.groupSize, mask: inp.mask, logpOld: oldTs.logp, sumP2Old: oldTs.sumP2 }, Tp, shape.adv.zeroTail)
          : advantageCpu(advIn, shape.adv, advShape);
      if (shape.whiten && !inp.raw) adv = whitenCpu(adv, inp.mask);
      t.adv.set(adv);
      // The ESS and VCPO's lr factor of each minibatch's trajectories.
      const essMb = shape.minibatches.map(([n0, n1]) => essScaleCpu({ len: ts.len.subarray(n0, n1), logIS: ts.logIS.subarray(n0, n1) }, shape.essLr));

      const seqMode = usesSeqRatio(mode) ? mode : null;
      const segs = mode === 'turn' || mode === 'step' ? T : 1;
      const seqLog = new Float32Array(N * segs);
      const lossOpts = {
        ...shape.loss,
        // ReGFT's fine-tuning stage trains with token cross-entropy, not the clipped surrogate.
        ratioMode: inp.raw ? RATIO_MODES.sft : RATIO_MODES[mode],
        klType: KL_TYPES[shape.loss.klType],
        tp: Tp,
        actionLen: shape.actionLen,
        maxTurns: T,
      };
      // SeeUPO trains one turn per stage, the last turn first; every other mode has one stage.
      const stages = mode === 'turn' ? Array.from({ length: T }, (_, k) => T - 1 - k) : [0];
      let gradNorm = 0;
      let health = 0;
      const firstStep = adamStep;
      // VCPO: each optimizer step's ESS and lr factor, of its own minibatch at its own parameters.
      const essSteps: Array<[number, number]> | null = shape.essLr.enabled ? [] : null;
      for (let epoch = 0; epoch < shape.epochs; epoch++) {
        for (const stage of stages) {
          const weights = mode === 'turn' ? inp.stageWeights![stage]! : inp.weights;
          for (const [mb, [n0, n1]] of shape.minibatches.entries()) {
            const [r0, r1] = [n0 * Tp, n1 * Tp];
            const mbRows = rows.subarray(r0, r1);
            // The first step's parameters are the old ones: its forward and row statistics are
            // those already computed, row for row.
            const fresh = adamStep === firstStep ? null : forward(params, mbRows);
            const f = fresh ?? { h: old.h.subarray(r0 * dims.H, r1 * dims.H), z: old.z.subarray(r0 * dims.V, r1 * dims.V) };
            if (fresh) progress();
            const tsNew = fresh
              ? tokenStatsCpu(fresh.z, dims.V, seq, mbRows, fresh.firstOf)
              : { logp: oldTs.logp.subarray(r0, r1), entropy: oldTs.entropy.subarray(r0, r1), sumP2: oldTs.sumP2.subarray(r0, r1) };
            t.logp.set(tsNew.logp, r0);
            t.entropy.set(tsNew.entropy, r0);
            t.sumP2.set(tsNew.sumP2, r0);
            let lrScale = essMb[mb]![1];
            if (essSteps) {
              const sub = { mask: inp.mask.subarray(r0, r1), logpOld: tsNew.logp, logpRollout: logpRollout.subarray(r0, r1), entropyOld: tsNew.entropy, sumP2Old: tsNew.sumP2 };
              const e = essScaleCpu(trajStatsCpu(sub, Tp), shape.essLr);
              essSteps.push(e);
              lrScale = e[1];
            }
            if (seqMode) {
              seqRatioCpu(inp.mask.subarray(r0, r1), tsNew.logp, t.logpOld.subarray(r0, r1), t.adv.subarray(r0, r1), {
                mode: seqMode === 'turn' || seqMode === 'step' ? 'turn' : seqMode,
                tp: Tp,
                actionLen: shape.actionLen,
                maxTurns: T,
                clipLow: shape.loss.clipLow,
                clipHigh: shape.loss.clipHigh,
                rowBase: r0,
              }, seqLog);
            }
            const lo = ppoLossCpu(
              tsNew.logp,
              t.logpOld.subarray(r0, r1),
              t.logpRef.subarray(r0, r1),
              t.adv.subarray(r0, r1),
              weights.subarray(r0, r1),
              { ...lossOpts, stage, rowBase: r0 },
              seqLog,
            );
            t.loss.set(lo.loss, r0);
            t.ratio.set(lo.ratio, r0);
            t.clip.set(lo.clip, r0);
            kl.set(lo.kl, r0);
            dlogpRows.set(lo.dlogp, r0);
            const dz = logitGradCpu(f.z, dims.V, seq, mbRows, lo.dlogp, shape.temperature);
            const grads = backwardCpu(params, dims, seq, L, mbRows, f.h, dz, progress);
            progress();
            gradNorm = gradNormCpu(grads);
            adamStep++;
            version++;
            const applied = adamCpu(params, grads, m, v, gradNorm, {
              lr: inp.lr * lrScale,
              beta1: shape.optim.beta1,
              beta2: shape.optim.beta2,
              eps: shape.optim.eps,
              step: adamStep,
              maxGradNorm: shape.optim.maxGradNorm,
            });
            if (!applied) health |= HEALTH.gradients;
            progress();
          }
        }
      }
      if (nonFiniteCpu(t.logp) || nonFiniteCpu(t.loss) || nonFiniteCpu(t.ratio)) health |= HEALTH.loss;
      if (nonFiniteCpu(params)) health |= HEALTH.parameters;
      if (shape.staleness > 0) {
        history.push(Float32Array.from(params));
        if (history.length > shape.staleness + 1) history.shift();
      }
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
        rewards: a.reward,
        groupStart: a.groupStart,
        groupSize: a.groupSize,
        turns: a.turns,
        Tp,
        minibatches: shape.minibatches.length,
      });
      const state = inp.snapshot ? snapshotNow() : undefined;
      return {
        ...stats,
        grad_norm: gradNorm,
        neg_out_grad_share: negOutShareCpu({ mask: inp.mask, adv: t.adv, logp: t.logp, logpOld: t.logpOld, dlogp: dlogpRows }),
        ...essOfUpdate(essMb, essSteps, adamStep - firstStep),
        non_finite: health,
        ...(state ? { state } : {}),
      };
    },
    resetReference() {
      version++;
      ref.set(params);
      m.fill(0);
      v.fill(0);
      adamStep = 0;
    },
    async readParams() {
      return Float32Array.from(params);
    },
    async snapshot() {
      return snapshotNow();
    },
    restore(st) {
      version++;
      if (critic) critic.set(st.critic ?? new Float32Array(critic.length));
      params.set(st.params);
      history = [Float32Array.from(st.params)];
      ref.set(st.ref);
      m.set(st.m);
      v.set(st.v);
      adamStep = st.adamStep;
    },
    injectNaN() {
      version++;
      params[0] = NaN;
    },
    async readBatch() {
      // Copies by slice(): structuredClone serializes, about 0.27 s for 65,536 rollouts' 23 MB.
      const { seq, logp, logpOld, logpRef, entropy, sumP2, adv, ratio, clip, loss, turnReward } = t;
      return {
        seq: seq.slice(),
        logp: logp.slice(),
        logpOld: logpOld.slice(),
        logpRef: logpRef.slice(),
        entropy: entropy.slice(),
        sumP2: sumP2.slice(),
        adv: adv.slice(),
        ratio: ratio.slice(),
        clip: clip.slice(),
        loss: loss.slice(),
        turnReward: turnReward.slice(),
        logpRollout: extra.logpRollout.slice(),
        entropyOld: extra.entropyOld.slice(),
        sumP2Old: extra.sumP2Old.slice(),
        kl: kl.slice(),
        g2: extra.g2.slice(),
        ...(extra.value ? { value: extra.value.slice(), ret: extra.ret!.slice() } : {}),
        ...(extra.answerLogp ? { answerLogp: extra.answerLogp.slice() } : {}),
      };
    },
    destroy() {},
  };
}
