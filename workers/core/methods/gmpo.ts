/**
 * GMPO: Geometric-Mean Policy Optimization (arXiv 2507.20673), docs/METHODS.md 5.12.
 *
 * Maximizes the geometric mean of the token-level importance-weighted rewards: per token the
 * log-ratio is clipped in log space to [-0.4, +0.4], one-sided by the sign of A (min for A > 0,
 * max for A < 0), then s_i = exp(mean_t clipped log-ratio) and the loss is mean_i(-s_i A_i). Outlier
 * ratios move the geometric mean little, which permits the wide clip range.
 */
import { defineMethod } from './registry';

export const gmpo = defineMethod({
  id: 'gmpo',
  name: 'GMPO',
  paper: '2507.20673',
  idea: 'Geometric mean of token ratios, with a sign-aware log-space clip of +-0.4.',
  stage: 'ratio',
  conflicts: ['gspo', 'seeupo', 'sampo', 'dapo', 'drgrpo'],
  params: {
    clip: { kind: 'number', default: 0.4, min: 0.01, max: 5, label: 'log-space clip', doc: 'Per-token log-ratio clip range [-clip, +clip] (GMPO: 0.4).' },
  },
  plan(plan, p) {
    plan.ratio = { mode: 'geometric', logClipLow: p.clip, logClipHigh: p.clip };
    plan.lossAgg = 'seq-mean-token-mean';
  },
  frameworks: {
    verl: () => ({
      set: [{ key: 'actor_rollout_ref.actor.policy_loss.loss_mode', value: 'geo_mean', from: [] }],
      matches: [{ param: 'clip', reason: 'exported as clip_ratio_low and clip_ratio_high (geo_mean reads them as log-space bounds)' }],
    }),
    trl: null,
    noEquivalent: "GMPO is TRL's experimental GMPOTrainer, not a GRPOConfig option",
  },
  remedies: { ess: 'GMPO (geometric mean)', grad: 'GMPO' },
  sweep: { toy: 'epochs', methods: 'grpo,gmpo', metric: 'ratioMax', dir: -1, claim: 'geometric mean: narrower ratios', also: ['entropyEnd', 'success'], outcome: { toy: 'epochs', dir: 1, claim: 'steadier off-policy updates learn faster' } },
});
