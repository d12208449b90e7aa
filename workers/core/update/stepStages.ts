/**
 * One optimizer step, epochs x (SeeUPO's turn stages) x minibatches of them per update: the
 * minibatch's forward (skipped on the first step, whose parameters are the old ones: the old
 * log-probs' h and z are its forward), its token statistics, VCPO's per-step ESS, sequence
 * ratios where the ratio mode needs them, the loss, the backward pass and the optimizer step.
 */
import { gradNormCpu, adamCpu, gradNormKernel } from '../../../kernels/optimizer/adam';
import { mlpBackward } from '../../../kernels/model/wasm/backward';
import { logitGradCpu } from '../../../kernels/softmax/logitGrad';
import { KL_TYPES, ppoLossCpu, RATIO_MODES, type PpoLossOptions } from '../../../kernels/loss/ppoLoss';
import { seqRatioCpu } from '../../../kernels/loss/seqRatio';
import { essScaleCpu } from '../../../kernels/optimizer/essScale';
import { HEALTH } from '../../../kernels/stats/finiteCheck';
import { tokenStatsCpu } from '../../../kernels/softmax/tokenStats';
import { trajStatsCpu, TRAJ_STATS_WORDS } from '../../../kernels/stats/trajStats';
import { paramLayout } from '../../../kernels/model/mlp';
import type { RunShape } from '../backend';
import { gradNormBlockFor } from '../gpuKernels';
import { ratioSlots, usesSeqRatio } from '../plan';
import { rolloutLogp } from './cpuUpdate';
import { turnStages, updateSteps, type StepRef, type UpdateStage } from './stage';

const hasSteps = (s: RunShape) => updateSteps(s) > 0;
/**
 * One call per (turn stage, minibatch), made by `make`; step s uses call s mod their count (the
 * steps repeat them per epoch).
 */
function perMinibatch<T>(s: RunShape, make: (turn: number, minibatch: number, n0: number, n1: number, tag: string) => T): (step: StepRef) => T {
  const calls = turnStages(s).flatMap((turn) =>
    s.minibatches.map(([n0, n1], i) => make(turn, i, n0, n1, `minibatch ${i}${s.loss.ratio.mode === 'turn' ? ` turn ${turn}` : ''}`)),
  );
  return (step) => calls[step.index % calls.length]!;
}

/** The loss kernel's options for a run (`raw`: ReGFT's fine-tuning stage, token cross-entropy). */
function lossOptions(s: RunShape, raw = false): PpoLossOptions {
  return {
    ...ratioSlots(s.loss.ratio),
    klCoef: s.loss.klCoef,
    ratioMode: raw ? RATIO_MODES.sft : RATIO_MODES[s.loss.ratio.mode],
    klType: KL_TYPES[s.loss.klType],
    tp: s.Tp,
    actionLen: s.actionLen,
    maxTurns: s.maxTurns,
  };
}

/** Every step after the first follows an optimizer step: the parameters, and so their table, changed. */
export const stepForward: UpdateStage = {
  name: 'stepForward',
  phase: 'step',
  part: 'logprobs',
  reads: ['params', 'seq'],
  writes: ['h', 'z'],
  kernels: ['embedProject', 'forward'],
  reference: 'kernels/model/mlp.ts: forwardCpu',
  enabled: hasSteps,
  repeats: (_, step) => (step!.index === 0 ? 0 : 1),
  pipelines: (k) => [...k.embedProject.pipelines(), ...k.forward.pipelines()],
  gpu({ k, b, shape, project }) {
    const call = perMinibatch(shape, (_, __, n0, n1, tag) =>
      k.forward.bind(
        { params: b.params, proj: b.proj, seq: b.seq, rowPos: b.trainRowPos, grammar: b.grammar, h: b.h, z: b.z },
        { numRows: (n1 - n0) * shape.Tp, rowBase: n0 * shape.Tp, dims: shape.dims, seqLen: shape.L, temperature: shape.temperature },
        `forward ${tag}`,
      ),
    );
    return {
      encode(pass, _, step) {
        if (step!.index === 0) return;
        k.embedProject.encode(pass, project.params);
        k.forward.encode(pass, call(step!));
      },
    };
  },
  cpu(c, _, step) {
    const { dims, Tp } = c.shape;
    const [r0, r1] = [step!.n0 * Tp, step!.n1 * Tp];
    if (step!.index === 0) {
      const old = c.old!;
      c.stepForward = { h: old.h.subarray(r0 * dims.H, r1 * dims.H), z: old.z.subarray(r0 * dims.V, r1 * dims.V) };
      return;
    }
    c.stepForward = c.forward(c.params, c.shape.trainRowPos.subarray(r0, r1));
    c.progress();
  },
};

/** The step's log-probs, entropies and sum p^2 (the old ones, row for row, on the first step). */
export const stepTokenStats: UpdateStage = {
  name: 'stepTokenStats',
  phase: 'step',
  part: 'logprobs',
  reads: ['z', 'seq'],
  writes: ['logp', 'entropy', 'sumP2'],
  kernels: ['tokenStats'],
  reference: 'kernels/softmax/tokenStats.ts: tokenStatsCpu',
  enabled: hasSteps,
  pipelines: (k, s) => k.tokenStats.pipelines({ vocab: s.dims.V, numRows: s.N * s.Tp }),
  gpu({ k, b, shape }) {
    const call = perMinibatch(shape, (_, __, n0, n1, tag) =>
      k.tokenStats.bind(
        { z: b.z, seq: b.seq, rowPos: b.trainRowPos, logp: b.logp, entropy: b.entropy, sumP2: b.sumP2 },
        { numRows: (n1 - n0) * shape.Tp, rowBase: n0 * shape.Tp, vocab: shape.dims.V },
        `tokenStats ${tag}`,
      ),
    );
    return { encode: (pass, _, step) => k.tokenStats.encode(pass, call(step!)) };
  },
  cpu(c, _, step) {
    const { Tp } = c.shape;
    const [r0, r1] = [step!.n0 * Tp, step!.n1 * Tp];
    const old = c.oldStats!;
    const f = c.stepForward!;
    c.stepStats =
      step!.index === 0
        ? { logp: old.logp.subarray(r0, r1), entropy: old.entropy.subarray(r0, r1), sumP2: old.sumP2.subarray(r0, r1) }
        : tokenStatsCpu(f.z, c.shape.dims.V, c.t.seq, c.shape.trainRowPos.subarray(r0, r1), f.firstOf);
    c.t.logp.set(c.stepStats.logp, r0);
    c.t.entropy.set(c.stepStats.entropy, r0);
    c.t.sumP2.set(c.stepStats.sumP2, r0);
  },
};

/**
 * VCPO: each optimizer step's ESS and lr factor, of its own minibatch's log IS weights at the
 * step's own parameters (its log-probs against the rollout's), as the reference measures them.
 */
export const stepEss: UpdateStage = {
  name: 'stepEss',
  phase: 'step',
  part: 'optimizer',
  reads: ['mask', 'logp', 'logpRollout', 'entropy', 'sumP2'],
  writes: ['essStep'],
  kernels: ['trajStats', 'essScale'],
  reference: 'kernels/stats/trajStats.ts: trajStatsCpu; kernels/optimizer/essScale.ts: essScaleCpu',
  enabled: (s) => hasSteps(s) && s.essLr.enabled,
  pipelines: (k) => [...k.trajStats.pipelines(), ...k.essScale.pipelines()],
  gpu({ k, b, shape, steps, essAt, f32 }) {
    const MB = shape.minibatches.length;
    // The step's per-trajectory statistics, its own: the update's trajStats stay the old policy's.
    const stats = f32('trajStats (optimizer step)', TRAJ_STATS_WORDS * shape.N);
    const calls = steps.map((s) => [
      k.trajStats.bind(
        { mask: b.mask, logpOld: b.logp, logpRollout: b.logpRollout, entropyOld: b.entropy, sumP2Old: b.sumP2, out: stats },
        { numTraj: shape.N, tp: shape.Tp },
        `trajStats step ${s.index}`,
      ),
      k.essScale.bind({ stats, out: essAt(MB + s.index) }, { numTraj: s.n1 - s.n0, trajBase: s.n0, ...shape.essLr }, `essScale step ${s.index}`),
    ] as const);
    return {
      encode(pass, _, step) {
        const [traj, ess] = calls[step!.index]!;
        k.trajStats.encode(pass, traj);
        k.essScale.encode(pass, ess);
      },
    };
  },
  cpu(c, inp, step) {
    const { Tp } = c.shape;
    const [r0, r1] = [step!.n0 * Tp, step!.n1 * Tp];
    const ts = c.stepStats!;
    const sub = { mask: inp.mask.subarray(r0, r1), logpOld: ts.logp, logpRollout: rolloutLogp(c).subarray(r0, r1), entropyOld: ts.entropy, sumP2Old: ts.sumP2 };
    c.essSteps!.push(essScaleCpu(trajStatsCpu(sub, Tp), c.shape.essLr));
  },
};

/** Sequence, geometric-mean, per-turn and per-step log-ratios (GSPO, GMPO, SeeUPO, SAMPO). */
export const seqRatio: UpdateStage = {
  name: 'seqRatio',
  phase: 'step',
  part: 'ratio',
  reads: ['mask', 'logp', 'logpOld', 'adv'],
  writes: ['seqLog'],
  kernels: ['seqRatio'],
  reference: 'kernels/loss/seqRatio.ts: seqRatioCpu',
  enabled: (s) => hasSteps(s) && usesSeqRatio(s.loss.ratio.mode),
  pipelines: (k) => k.seqRatio.pipelines(),
  gpu({ k, b, shape }) {
    const call = perMinibatch(shape, (_, __, n0, n1, tag) =>
      k.seqRatio.bind(
        { mask: b.mask, logp: b.logp, logpOld: b.logpOld, adv: b.adv, out: b.seqLog },
        { numRows: (n1 - n0) * shape.Tp, rowBase: n0 * shape.Tp, ...seqRatioOptions(shape) },
        `seqRatio ${tag}`,
      ),
    );
    return { encode: (pass, _, step) => k.seqRatio.encode(pass, call(step!)) };
  },
  cpu(c, inp, step) {
    const { Tp } = c.shape;
    const [r0, r1] = [step!.n0 * Tp, step!.n1 * Tp];
    seqRatioCpu(inp.mask.subarray(r0, r1), c.stepStats!.logp, c.t.logpOld.subarray(r0, r1), c.t.adv.subarray(r0, r1), { ...seqRatioOptions(c.shape), rowBase: r0 }, c.seqLog);
  },
};

const seqRatioOptions = (s: RunShape) => {
  const mode = s.loss.ratio.mode;
  return {
    mode: mode === 'turn' || mode === 'step' ? ('turn' as const) : (mode as 'sequence' | 'geometric'),
    tp: s.Tp,
    actionLen: s.actionLen,
    maxTurns: s.maxTurns,
    clipLow: ratioSlots(s.loss.ratio).clipLow,
    clipHigh: ratioSlots(s.loss.ratio).clipHigh,
  };
};

/**
 * The policy loss of every row of the step (the ratio mode's surrogate plus the KL), and its
 * gradient in logp; with a rollout correction, each row's policy term times its IS weight.
 */
export const loss: UpdateStage = {
  name: 'loss',
  phase: 'step',
  part: 'loss',
  reads: ['logp', 'logpOld', 'logpRef', 'adv', 'weights', 'stageWeights', 'seqLog'],
  writes: ['ratio', 'clip', 'kl', 'loss', 'dlogp'],
  kernels: ['ppoLoss'],
  reference: 'kernels/loss/ppoLoss.ts: ppoLossCpu',
  enabled: hasSteps,
  pipelines: (k) => k.ppoLoss.pipelines(),
  gpu({ k, b, shape }) {
    // A rollout correction's IS weights: the second half of the weights' buffers (correctionStages.ts).
    const isBase = shape.correction?.rolloutIs ? shape.N * shape.Tp : undefined;
    const call = perMinibatch(shape, (turn, _, n0, n1, tag) => {
      const rows = { numRows: (n1 - n0) * shape.Tp, rowBase: n0 * shape.Tp };
      // SeeUPO: stage k's loss reads its own turn's weights.
      const weight = shape.loss.ratio.mode === 'turn' ? b.stageWeights[turn]! : b.weights;
      const buffers = { logp: b.logp, logpOld: b.logpOld, logpRef: b.logpRef, adv: b.adv, weight, seqLog: b.seqLog, dlogp: b.dlogp, out: b.ppo };
      return {
        rl: k.ppoLoss.bind(buffers, { ...rows, ...lossOptions(shape), stage: turn, ...(isBase !== undefined ? { isBase } : {}) }, `ppoLoss ${tag}`),
        // ReGFT's fine-tuning stage: the same rows with the cross-entropy loss.
        sft: shape.sft ? k.ppoLoss.bind(buffers, { ...rows, ...lossOptions(shape, true), stage: turn }, `sft loss ${tag}`) : null,
      };
    });
    return {
      encode(pass, inp, step) {
        const { rl, sft } = call(step!);
        k.ppoLoss.encode(pass, inp.raw && sft ? sft : rl);
      },
    };
  },
  cpu(c, inp, step) {
    const { Tp } = c.shape;
    const [r0, r1] = [step!.n0 * Tp, step!.n1 * Tp];
    const weights = c.shape.loss.ratio.mode === 'turn' ? inp.stageWeights![step!.turn]! : inp.weights;
    const t = c.t;
    const lo = ppoLossCpu(
      c.stepStats!.logp,
      t.logpOld.subarray(r0, r1),
      t.logpRef.subarray(r0, r1),
      t.adv.subarray(r0, r1),
      weights.subarray(r0, r1),
      { ...lossOptions(c.shape, inp.raw), stage: step!.turn, rowBase: r0 },
      c.seqLog,
      inp.isWeight?.subarray(r0, r1),
    );
    t.loss.set(lo.loss, r0);
    t.ratio.set(lo.ratio, r0);
    t.clip.set(lo.clip, r0);
    t.kl.set(lo.kl, r0);
    t.dlogp.set(lo.dlogp, r0);
  },
};

/** The backward pass through the MLP: logit gradients, then every parameter's. */
export const backward: UpdateStage = {
  name: 'backward',
  phase: 'step',
  part: 'gradient',
  reads: ['params', 'seq', 'h', 'z', 'dlogp'],
  writes: ['grads'],
  kernels: ['logitGrad', 'headGrad', 'hiddenGrad', 'slotGrad', 'firstLayerGrad'],
  reference: 'kernels/softmax/logitGrad.ts: logitGradCpu; kernels/model/mlp.ts: backwardCpu',
  enabled: hasSteps,
  pipelines: (k, s) => [
    ...k.logitGrad.pipelines({ numRows: s.N * s.Tp, vocab: s.dims.V, temperature: s.temperature }),
    ...k.headGrad.pipelines(),
    ...k.hiddenGrad.pipelines(),
    ...k.slotGrad.pipelines(),
    ...k.firstLayerGrad.pipelines(),
  ],
  gpu({ k, b, shape }) {
    const { dims, L } = shape;
    const call = perMinibatch(shape, (_, __, n0, n1, tag) => {
      const rows = { numRows: (n1 - n0) * shape.Tp, rowBase: n0 * shape.Tp };
      return {
        logit: k.logitGrad.bind({ z: b.z, seq: b.seq, rowPos: b.trainRowPos, dlogp: b.dlogp, dz: b.dz }, { ...rows, vocab: dims.V, temperature: shape.temperature }, `logitGrad ${tag}`),
        head: k.headGrad.bind({ h: b.h, dz: b.dz, partials: b.partials, grads: b.grads }, { ...rows, dims }, `headGrad ${tag}`),
        hidden: k.hiddenGrad.bind({ params: b.params, h: b.h, dz: b.dz, da: b.da }, { ...rows, dims }, `hiddenGrad ${tag}`),
        slot: k.slotGrad.bind({ seq: b.seq, rowPos: b.trainRowPos, da: b.da, partials: b.partials, grads: b.slotSums }, { ...rows, dims, seqLen: L }, `slotGrad ${tag}`),
      };
    });
    // The same for every minibatch: it reads only the parameters and the slot sums.
    const firstLayer = k.firstLayerGrad.bind({ params: b.params, G: b.slotSums, grads: b.grads }, { dims });
    return {
      encode(pass, _, step) {
        const c = call(step!);
        k.logitGrad.encode(pass, c.logit);
        k.headGrad.encode(pass, c.head);
        k.hiddenGrad.encode(pass, c.hidden);
        k.slotGrad.encode(pass, c.slot);
        k.firstLayerGrad.encode(pass, firstLayer);
      },
    };
  },
  cpu(c, _, step) {
    const { dims, Tp, L } = c.shape;
    const [r0, r1] = [step!.n0 * Tp, step!.n1 * Tp];
    const rows = c.shape.trainRowPos.subarray(r0, r1);
    const f = c.stepForward!;
    const dz = logitGradCpu(f.z, dims.V, c.t.seq, rows, c.t.dlogp.subarray(r0, r1), c.shape.temperature);
    c.grads = mlpBackward(c.params, dims, c.t.seq, L, rows, f.h, dz, c.progress);
    c.progress();
  },
};

/** The global gradient-norm clip and Adam, at lr times the step's ESS factor (1 without VCPO). */
export const optimizer: UpdateStage = {
  name: 'optimizer',
  phase: 'step',
  part: 'optimizer',
  reads: ['grads', 'lr', 'essMinibatch', 'essStep'],
  writes: ['params', 'gradNorm', 'health'],
  kernels: ['optimizerStep'],
  reference: 'kernels/optimizer/adam.ts: gradNormCpu, adamCpu',
  enabled: hasSteps,
  pipelines: (k) => k.optimizerStep.pipelines(),
  gpu({ k, b, shape, steps, variant, essAt, f32 }) {
    const norm = { n: paramLayout(shape.dims).size, block: gradNormBlockFor(shape, variant) };
    // gradNorm's per-block sums of squares: its own, as small as that, so no other kernel's scratch
    // has to outlive or make room for it.
    const partials = f32('grad norm partials', gradNormKernel.scratchWords(norm));
    const MB = shape.minibatches.length;
    const config = (lr: number, step: number) => ({ ...norm, lr, ...shape.optim, step });
    // One uniform per optimizer step of an update: the bias corrections differ per step.
    const calls = steps.map((s) =>
      k.optimizerStep.bind(
        { params: b.params, grads: b.grads, m: b.m, v: b.v, partials, norm: b.norm, health: b.health, lrScale: essAt(shape.essLr.enabled ? MB + s.index : s.minibatch) },
        config(0, s.index + 1),
        `optimizer step ${s.index}`,
      ),
    );
    return {
      upload(inp, adamStep) {
        calls.forEach((call, s) => call.update(config(inp.lr, adamStep + s + 1)));
      },
      encode: (pass, _, step) => k.optimizerStep.encode(pass, calls[step!.index]!),
    };
  },
  cpu(c, inp, step) {
    const grads = c.grads!;
    const lrScale = (c.essSteps ? c.essSteps[step!.index]! : c.essMinibatch[step!.minibatch]!)[1];
    c.gradNorm = gradNormCpu(grads);
    c.adamStep++;
    c.paramsChanged();
    const o = c.shape.optim;
    const applied = adamCpu(c.params, grads, c.m, c.v, c.gradNorm, { lr: inp.lr * lrScale, beta1: o.beta1, beta2: o.beta2, eps: o.eps, step: c.adamStep, maxGradNorm: o.maxGradNorm });
    if (!applied) c.health |= HEALTH.gradients;
    c.progress();
  },
};
