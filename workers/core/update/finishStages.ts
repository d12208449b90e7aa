/**
 * After the last optimizer step: the charts' statistics, ARLArena's crash diagnosis and the finite
 * checks, read back with the update's one copy.
 */
import { paramLayout } from '../../../kernels/model/mlp';
import { PPO_ROW_WORDS } from '../../../kernels/loss/ppoLoss';
import { HEALTH, nonFiniteCpu } from '../../../kernels/stats/finiteCheck';
import { mismatchStatsCpu } from '../../../kernels/stats/mismatchStats';
import { negOutShareCpu } from '../../../kernels/stats/negOutShare';
import { statsCpu, statsKernel } from '../../../kernels/stats/stats';
import { statsConfigFor } from '../gpuKernels';
import type { UpdateStage } from './stage';

/** One row of scalars and two histograms (kernels/stats/stats.ts) over the update's rows. */
export const stats: UpdateStage = {
  name: 'stats',
  phase: 'finish',
  part: 'statistics',
  reads: ['mask', 'adv', 'logp', 'logpOld', 'entropy', 'kl', 'clip', 'loss', 'advInputs'],
  writes: ['stats'],
  kernels: ['stats'],
  reference: 'kernels/stats/stats.ts: statsCpu',
  enabled: () => true,
  pipelines: (k, s, variant) => k.stats.pipelines(statsConfigFor(s, variant)),
  gpu({ k, b, shape, variant, f32 }) {
    const config = statsConfigFor(shape, variant);
    // Pass 1's per-chunk records, its own scratch.
    const partials = f32('stats partials', statsKernel.scratchWords(config));
    const call = k.stats.bind({ mask: b.mask, adv: b.adv, logp: b.logp, logpOld: b.logpOld, entropy: b.entropy, ppo: b.ppo, traj: b.trajIn, partials, out: b.statsOut }, config);
    return { encode: (pass) => k.stats.encode(pass, call) };
  },
  cpu(c, inp) {
    const { t } = c;
    const a = c.adv;
    c.stats = statsCpu({
      mask: inp.mask,
      adv: t.adv,
      logp: t.logp,
      logpOld: t.logpOld,
      entropy: t.entropy,
      kl: t.kl,
      clip: t.clip,
      loss: t.loss,
      rewards: a.reward,
      groupStart: a.groupStart,
      groupSize: a.groupSize,
      turns: a.turns,
      Tp: c.shape.Tp,
      minibatches: c.shape.minibatches.length,
    });
  },
};

/** ARLArena's diagnosis (kernels/stats/negOutShare.ts) over every row after the last step: the last epoch's dlogp. */
export const negOutShare: UpdateStage = {
  name: 'negOutShare',
  phase: 'finish',
  part: 'statistics',
  reads: ['mask', 'adv', 'logp', 'logpOld', 'dlogp'],
  writes: ['negOutShare'],
  kernels: ['negOutShare'],
  reference: 'kernels/stats/negOutShare.ts: negOutShareCpu',
  enabled: () => true,
  pipelines: (k) => k.negOutShare.pipelines(),
  gpu({ k, b, shape }) {
    const call = k.negOutShare.bind({ mask: b.mask, adv: b.adv, logp: b.logp, logpOld: b.logpOld, dlogp: b.dlogp, out: b.negOutOut }, { numRows: shape.N * shape.Tp });
    return { encode: (pass) => k.negOutShare.encode(pass, call) };
  },
  cpu(c, inp) {
    const { t } = c;
    c.negOutShare = negOutShareCpu({ mask: inp.mask, adv: t.adv, logp: t.logp, logpOld: t.logpOld, dlogp: t.dlogp });
  },
};

/**
 * The sampler's distance from the trainer (kernels/stats/mismatchStats.ts): the old log-probs
 * against the rollout's over the policy tokens. Measured every update, so a run whose sampler is the
 * trainer's shows its zeros rather than nothing. Over the collected mask, rejected tokens included,
 * as verl measures it: a rollout correction's rejection would otherwise hide what it rejects.
 */
export const mismatchStats: UpdateStage = {
  name: 'mismatchStats',
  phase: 'finish',
  part: 'statistics',
  reads: ['mask', 'logpOld', 'logpRollout'],
  writes: ['mismatch'],
  kernels: ['mismatchStats'],
  reference: 'kernels/stats/mismatchStats.ts: mismatchStatsCpu',
  enabled: () => true,
  pipelines: (k) => k.mismatchStats.pipelines(),
  gpu({ k, b, shape }) {
    const call = k.mismatchStats.bind({ mask: b.sampledMask, logpOld: b.logpOld, logpRollout: b.logpRollout, out: b.mismatchOut }, { numTraj: shape.N, tp: shape.Tp });
    return { encode: (pass) => k.mismatchStats.encode(pass, call) };
  },
  cpu(c, inp) {
    c.mismatch = mismatchStatsCpu({ mask: c.sampledMask ?? inp.mask, logpOld: c.t.logpOld, logpRollout: c.t.logpRollout, Tp: c.shape.Tp });
  },
};

/**
 * NaN or Inf in the log-probs, the loss and ratio columns (not the clip column, whose -1 is all
 * ones in bits) or the parameters; the optimizer flags the gradients. logp is checked because
 * clamp() of a NaN log-ratio may return a finite number on a GPU. One dispatch.
 */
export const finiteCheck: UpdateStage = {
  name: 'finiteCheck',
  phase: 'finish',
  part: 'statistics',
  reads: ['logp', 'loss', 'ratio', 'params'],
  writes: ['health'],
  kernels: ['finiteCheck'],
  reference: 'kernels/stats/finiteCheck.ts: nonFiniteCpu',
  enabled: () => true,
  pipelines: (k) => k.finiteCheck.pipelines(),
  gpu({ k, b, shape }) {
    const call = k.finiteCheck.bind({ logp: b.logp, ppo: b.ppo, params: b.params, health: b.health }, { rows: shape.N * shape.Tp, rowWords: PPO_ROW_WORDS, params: paramLayout(shape.dims).size });
    return { encode: (pass) => k.finiteCheck.encode(pass, call) };
  },
  cpu(c) {
    const { t } = c;
    if (nonFiniteCpu(t.logp) || nonFiniteCpu(t.loss) || nonFiniteCpu(t.ratio)) c.health |= HEALTH.loss;
    if (nonFiniteCpu(c.params)) c.health |= HEALTH.parameters;
  },
};
