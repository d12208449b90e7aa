/**
 * The update's advantage stages: per-trajectory statistics, VCPO's per-trajectory gradient norm,
 * then exactly one advantage (ReGFT's fine-tuning reward, PPO's GAE over its critic, OTB's token
 * baseline, or the estimator's kernel), batch whitening, and the ESS of each minibatch.
 */
import { advantageCpu } from '../../../kernels/advantage/advantage';
import { criticUpdateCpu, criticUpdateKernel, gaeCpu } from '../../../kernels/advantage/critic';
import { tokenBaselineCpu } from '../../../kernels/advantage/tokenBaseline';
import { whitenCpu, whitenScratchWords } from '../../../kernels/advantage/whiten';
import { trajGradNormCpu } from '../../../kernels/model/trajGradNorm';
import { essScaleCpu } from '../../../kernels/optimizer/essScale';
import { trajStatsCpu } from '../../../kernels/stats/trajStats';
import type { AdvantageOptions } from '../../../kernels/advantage/options';
import type { RunShape } from '../backend';
import { advantageConfigFor } from '../gpuKernels';
import { rolloutLogp, type CpuUpdate } from './cpuUpdate';
import type { UpdateStage } from './stage';

/** Length, mean entropy, log IS weight and score-norm proxy of every trajectory. */
export const trajStats: UpdateStage = {
  name: 'trajStats',
  phase: 'prepare',
  part: 'advantage',
  reads: ['mask', 'logpOld', 'logpRollout', 'entropyOld', 'sumP2Old'],
  writes: ['trajStats', 'g2'],
  kernels: ['trajStats'],
  reference: 'kernels/stats/trajStats.ts: trajStatsCpu',
  enabled: () => true,
  pipelines: (k) => k.trajStats.pipelines(),
  gpu({ k, b, shape }) {
    const call = k.trajStats.bind(
      { mask: b.mask, logpOld: b.logpOld, logpRollout: b.logpRollout, entropyOld: b.entropyOld, sumP2Old: b.sumP2Old, out: b.trajStats },
      { numTraj: shape.N, tp: shape.Tp },
    );
    return { encode: (pass) => k.trajStats.encode(pass, call) };
  },
  cpu(c, inp) {
    const old = c.oldStats!;
    c.trajStats = trajStatsCpu({ mask: inp.mask, logpOld: old.logp, logpRollout: rolloutLogp(c), entropyOld: old.entropy, sumP2Old: old.sumP2 }, c.shape.Tp);
    c.t.g2.set(c.trajStats.g2);
  },
};

/**
 * VCPO: each trajectory's own gradient norm under the old parameters (the score's logit and hidden
 * gradients with dlogp = mask, then their per-trajectory norm) replaces the proxy in g2.
 */
export const trajGradNorm: UpdateStage = {
  name: 'trajGradNorm',
  phase: 'prepare',
  part: 'advantage',
  reads: ['params', 'seq', 'h', 'z', 'mask', 'trajStats'],
  writes: ['g2'],
  kernels: ['logitGrad', 'hiddenGrad', 'trajGradNorm'],
  reference: 'kernels/model/trajGradNorm.ts: trajGradNormCpu',
  enabled: (s) => s.adv.trueGradNorm === true,
  pipelines: (k, s) => [
    ...k.logitGrad.pipelines({ numRows: s.N * s.Tp, vocab: s.dims.V, temperature: s.temperature }),
    ...k.hiddenGrad.pipelines(),
    ...k.trajGradNorm.pipelines(),
  ],
  gpu({ k, b, shape }) {
    const R = shape.N * shape.Tp;
    const logit = k.logitGrad.bind(
      { z: b.z, seq: b.seq, rowPos: b.trainRowPos, dlogp: b.mask, dz: b.dz },
      { numRows: R, rowBase: 0, vocab: shape.dims.V, temperature: shape.temperature },
      'logitGrad score',
    );
    const hidden = k.hiddenGrad.bind({ params: b.params, h: b.h, dz: b.dz, da: b.da }, { numRows: R, rowBase: 0, dims: shape.dims }, 'hiddenGrad score');
    const norm = k.trajGradNorm.bind(
      { params: b.params, h: b.h, dz: b.dz, da: b.da, seq: b.seq, rowPos: b.trainRowPos, mask: b.mask, stats: b.trajStats },
      { numTraj: shape.N, tp: shape.Tp, seqLen: shape.L, dims: shape.dims, isCap: shape.adv.isCap },
    );
    return {
      encode(pass) {
        k.logitGrad.encode(pass, logit);
        k.hiddenGrad.encode(pass, hidden);
        k.trajGradNorm.encode(pass, norm);
      },
    };
  },
  cpu(c, inp) {
    const { shape } = c;
    const old = c.old!;
    const ts = c.trajStats!;
    ts.g2 = trajGradNormCpu(
      { params: c.params, dims: shape.dims, seq: c.t.seq, L: shape.L, rowPos: shape.trainRowPos, h: old.h, z: old.z, mask: inp.mask, temperature: shape.temperature, logIS: ts.logIS, isCap: shape.adv.isCap },
      shape.Tp,
    );
    c.t.g2.set(ts.g2);
    c.progress();
  },
};

const advantageShape = (s: RunShape) => ({ numTraj: s.N, tp: s.Tp, maxTurns: s.maxTurns, actionLen: s.actionLen, nRoles: s.nRoles });
/** ReGFT's fine-tuning updates: the advantage is the reward itself. */
const RAW = { estimator: 'raw', byRole: false, entropyScale: false } as const satisfies Partial<AdvantageOptions>;
const advantageInputs = (c: CpuUpdate, mask: Float32Array) => ({ ...c.adv, trajStats: c.trajStats!, mask, logpOld: c.t.logpOld, logpRef: c.t.logpRef });
const ADVANTAGE_READS = ['advInputs', 'turnReward', 'trajStats', 'g2', 'mask', 'logpOld', 'logpRef'] as const;

/** ReGFT's fine-tuning stage: the kept (correct) rollouts' reward is their advantage. */
export const sftAdvantage: UpdateStage = {
  name: 'sftAdvantage',
  phase: 'prepare',
  part: 'advantage',
  reads: ADVANTAGE_READS,
  writes: ['adv'],
  kernels: ['advantage'],
  reference: 'kernels/advantage/advantage.ts: advantageCpu (estimator raw)',
  // Bound in every run, so that an update asking for it always finds it.
  enabled: () => true,
  runs: (inp) => inp.raw === true,
  pipelines: (k, s, variant) => k.advantage.pipelines({ ...advantageConfigFor(s, variant), ...RAW }),
  gpu({ k, b, shape, variant }) {
    const call = k.advantage.bind(
      { trajIn: b.trajIn, turnIn: b.turnIn, roleRewards: b.roleRewards, trajStats: b.trajStats, mask: b.mask, logpOld: b.logpOld, logpRef: b.logpRef, adv: b.adv },
      { ...advantageConfigFor(shape, variant), ...RAW },
      'advantage raw',
    );
    return { encode: (pass) => k.advantage.encode(pass, call) };
  },
  cpu(c, inp) {
    c.t.adv.set(advantageCpu(advantageInputs(c, inp.mask), { ...c.shape.adv, ...RAW }, advantageShape(c.shape)));
  },
};

/** PPO: GAE over the critic table (the values before this update), then the table's own step toward the returns. */
export const criticAdvantage: UpdateStage = {
  name: 'criticAdvantage',
  phase: 'prepare',
  part: 'advantage',
  reads: ['critic', 'stateKeys', 'mask', 'advInputs'],
  writes: ['adv', 'values', 'returns', 'critic'],
  kernels: ['gae', 'criticUpdate'],
  reference: 'kernels/advantage/critic.ts: gaeCpu, criticUpdateCpu',
  enabled: (s) => s.critic !== null,
  runs: (inp) => !inp.raw,
  pipelines: (k, s) => [...k.gae.pipelines({ numTraj: s.N, tp: s.Tp, gamma: s.critic!.gamma, lambda: s.critic!.lambda }), ...k.criticUpdate.pipelines()],
  gpu({ k, b, shape, f32 }) {
    const critic = shape.critic!;
    const R = shape.N * shape.Tp;
    const gae = k.gae.bind(
      { critic: b.criticTable, stateKey: b.stateKey, mask: b.mask, trajIn: b.trajIn, adv: b.adv, ret: b.returns },
      { numTraj: shape.N, tp: shape.Tp, gamma: critic.gamma, lambda: critic.lambda },
    );
    // The critic update's per-chunk (sum, count) tables, its own (at most 8 MiB at 4096 entries).
    const config = { tableSize: critic.size, numRows: R, lr: critic.lr };
    const partials = f32('critic partials', criticUpdateKernel.scratchWords(config));
    const update = k.criticUpdate.bind({ stateKey: b.stateKey, mask: b.mask, ret: b.returns, partials, critic: b.criticTable }, config);
    return {
      encode(pass) {
        k.gae.encode(pass, gae);
        k.criticUpdate.encode(pass, update);
      },
    };
  },
  cpu(c, inp) {
    const critic = c.critic!;
    const keys = inp.stateKey!;
    const gae = gaeCpu(critic, keys, inp.mask, c.adv.reward, c.shape.Tp, c.shape.critic!);
    c.t.value = Float32Array.from(keys, (key) => critic[key]!);
    c.t.ret = gae.ret;
    criticUpdateCpu(critic, keys, inp.mask, gae.ret, c.shape.critic!.lr);
    c.t.adv.set(gae.adv);
  },
};

/** OTB: the per-token baseline weighted by the cumulative squared score norm (PPO's critic takes its place). */
export const tokenBaseline: UpdateStage = {
  name: 'tokenBaseline',
  phase: 'prepare',
  part: 'advantage',
  reads: ['advInputs', 'mask', 'logpOld', 'sumP2Old'],
  writes: ['adv'],
  kernels: ['tokenBaseline'],
  reference: 'kernels/advantage/tokenBaseline.ts: tokenBaselineCpu',
  enabled: (s) => !s.critic && s.adv.otb,
  runs: (inp) => !inp.raw,
  pipelines: (k) => k.tokenBaseline.pipelines(),
  gpu({ k, b, shape }) {
    // W by position goes where the reference pass put its unused entropy (written again only by
    // the next update's reference pass).
    const call = k.tokenBaseline.bind(
      { trajIn: b.trajIn, mask: b.mask, logpOld: b.logpOld, sumP2Old: b.sumP2Old, wpos: b.scratchEntropy, adv: b.adv },
      { numTraj: shape.N, tp: shape.Tp, zeroTail: shape.adv.zeroTail },
    );
    return { encode: (pass) => k.tokenBaseline.encode(pass, call) };
  },
  cpu(c, inp) {
    const a = c.adv;
    const old = c.oldStats!;
    c.t.adv.set(tokenBaselineCpu({ reward: a.reward, groupStart: a.groupStart, groupSize: a.groupSize, mask: inp.mask, logpOld: old.logp, sumP2Old: old.sumP2 }, c.shape.Tp, c.shape.adv.zeroTail));
  },
};

/** The estimator's kernel (every estimator of the method catalogue: kernels/advantage/advantage.ts). */
export const advantage: UpdateStage = {
  name: 'advantage',
  phase: 'prepare',
  part: 'advantage',
  reads: ADVANTAGE_READS,
  writes: ['adv'],
  kernels: ['advantage'],
  reference: 'kernels/advantage/advantage.ts: advantageCpu',
  enabled: (s) => !s.critic && !s.adv.otb,
  runs: (inp) => !inp.raw,
  pipelines: (k, s, variant) => k.advantage.pipelines(advantageConfigFor(s, variant)),
  gpu({ k, b, shape, variant }) {
    const call = k.advantage.bind(
      { trajIn: b.trajIn, turnIn: b.turnIn, roleRewards: b.roleRewards, trajStats: b.trajStats, mask: b.mask, logpOld: b.logpOld, logpRef: b.logpRef, adv: b.adv },
      advantageConfigFor(shape, variant),
      'advantage',
    );
    return { encode: (pass) => k.advantage.encode(pass, call) };
  },
  cpu(c, inp) {
    c.t.adv.set(advantageCpu(advantageInputs(c, inp.mask), c.shape.adv, advantageShape(c.shape)));
  },
};

/** REINFORCE++ and PPO: advantages whitened over the whole batch. */
export const whiten: UpdateStage = {
  name: 'whiten',
  phase: 'prepare',
  part: 'advantage',
  reads: ['adv', 'mask'],
  writes: ['adv'],
  kernels: ['whiten'],
  reference: 'kernels/advantage/whiten.ts: whitenCpu',
  enabled: (s) => s.whiten,
  runs: (inp) => !inp.raw,
  pipelines: (k) => k.whiten.pipelines(),
  gpu({ k, b, shape, f32 }) {
    const R = shape.N * shape.Tp;
    // Its per-block moments, then its mean and sd (<= 257 vec4f): its own scratch.
    const call = k.whiten.bind({ mask: b.mask, adv: b.adv, partials: f32('whiten partials', whitenScratchWords(R)) }, { numRows: R });
    return { encode: (pass) => k.whiten.encode(pass, call) };
  },
  cpu(c, inp) {
    c.t.adv.set(whitenCpu(c.t.adv, inp.mask));
  },
};

/** The ESS of each minibatch's rollouts at the update's start, and VCPO's lr factor from it. */
export const essScale: UpdateStage = {
  name: 'essScale',
  phase: 'prepare',
  part: 'optimizer',
  reads: ['trajStats'],
  writes: ['essMinibatch'],
  kernels: ['essScale'],
  reference: 'kernels/optimizer/essScale.ts: essScaleCpu',
  enabled: () => true,
  repeats: (s) => s.minibatches.length,
  pipelines: (k) => k.essScale.pipelines(),
  gpu({ k, b, shape, essAt }) {
    const calls = shape.minibatches.map(([n0, n1], i) =>
      k.essScale.bind({ stats: b.trajStats, out: essAt(i) }, { numTraj: n1 - n0, trajBase: n0, ...shape.essLr }, `essScale minibatch ${i}`),
    );
    return {
      encode(pass) {
        for (const call of calls) k.essScale.encode(pass, call);
      },
    };
  },
  cpu(c) {
    const ts = c.trajStats!;
    c.essMinibatch = c.shape.minibatches.map(([n0, n1]) => essScaleCpu({ len: ts.len.subarray(n0, n1), logIS: ts.logIS.subarray(n0, n1) }, c.shape.essLr));
  },
};
