/**
 * VCPO: Variance-Controlled Policy Optimization (arXiv 2602.17616), docs/METHODS.md 5.10, mit-han-lab/vcpo.
 *
 * For stale (off-policy) rollouts -- set `staleness` to sample from the policy k updates old:
 * 1. the learning rate of each minibatch's step is scaled by the effective sample size of that
 *    minibatch's sequence IS weights w_i = exp(sum_t logp_old - logp_rollout):
 *    lr * sqrt(min(1, ESS/(N rho_base))) (or linear), in log space (megatron_actor.py:846, 881-898);
 * 2. the off-policy optimal baseline b = sum w^2 |g|^2 R / sum w^2 |g|^2 per group, A = (R - b)/std
 *    with the group's population std and no epsilon, divided only where the std is above 1e-8
 *    (mit-han-lab/vcpo@c7f030f0 megatron_actor.py:810-812), times the truncated sequence IS weight
 *    min(w_i, isCap);
 * 3. no PPO clipping at all: the recipe sets clip_ratio_low 1.0, clip_ratio_high 1e9 and
 *    clip_ratio_c 1e9 (vcpo_k=10.sh:67-69), so the truncation of the IS weight is the only bound;
 *    seq-mean-token-mean.
 * |g_i| is the norm of trajectory i's own loss gradient over all parameters, with advantage 1 and
 * its truncated IS weight (kernels/model/trajGradNorm.ts): the reference backpropagates each
 * trajectory alone with `advantages = ones` (megatron_actor.py:1001-1003), takes the global norm
 * and multiplies it by the response length to undo seq-mean-token-mean's 1/L
 * (megatron_actor.py:756-788, `grad_norm_unscaled`); the baseline weighs it squared times the
 * unclipped IS ratio squared (staleness_utils.py:452-455, use_clipped_is_ratios=False and
 * normalize_by_length=False in vcpo_k=10.sh:111-115). The recipe recomputes nothing before the
 * step (skip_recompute_old_log_prob=True, vcpo_k=10.sh:88: old = the current log-probs detached,
 * megatron_actor.py:504, so every ratio is 1) and has one minibatch per update (vcpo_k=10.sh:94),
 * so the parameters before the update are the ones the reference uses; with several minibatches
 * here the norm (like the IS weights) stays that of the parameters before the update, where the
 * reference would take each minibatch's current parameters (docs/METHODS.md section 8).
 * Option gradNorm = 'proxy' departs: the closed-form score norm sum_t (1 - 2 pi_t + sum pi^2).
 */
import { defineMethod } from './registry';

export const vcpo = defineMethod({
  id: 'vcpo',
  name: 'VCPO',
  paper: '2602.17616',
  idea: 'Scale the step by the effective sample size of stale rollouts; off-policy optimal baseline.',
  stage: 'optimizer',
  estimator: true,
  conflicts: ['dapo', 'drgrpo', 'seeupo'],
  params: {
    rule: { kind: 'choice', default: 'sqrt', options: ['sqrt', 'linear'], label: 'lr rule', doc: 'lr * sqrt(rho) (AdamW default) or lr * rho.' },
    baseEss: { kind: 'number', default: 1, min: 0.01, max: 1, label: 'base ESS ratio', doc: 'rho_base: ESS/N at which the full lr applies.' },
    isCap: { kind: 'number', default: 8, min: 0, max: 100, label: 'IS cap', doc: 'Truncation of the sequence IS weight (0: no IS weight).' },
    gradNorm: {
      kind: 'choice',
      default: 'reference',
      options: ['reference', 'proxy'],
      label: 'baseline |g|',
      doc: 'reference: each trajectory\'s own loss-gradient norm over all parameters (A = 1, truncated IS weight), as the reference code does. proxy: the closed-form logit-score norm sum_t (1 - 2 pi_t + sum pi^2), which departs from the reference (no parameters, no cross-token terms).',
    },
  },
  plan(plan, p) {
    Object.assign(plan.advantage, {
      estimator: 'opob', scaleStd: true, unbiasedStd: false, eps: 0, stdMin: 1e-8, isCap: p.isCap, trueGradNorm: p.gradNorm === 'reference',
    });
    // No ratio floor (1 - 1.0 = 0), no ceiling, no dual clip: only the IS truncation bounds it.
    plan.ratio = { mode: 'token', clipLow: 1, clipHigh: 1e9, dualClip: 1e9 };
    plan.lossAgg = 'seq-mean-token-mean';
    plan.essLr = { rule: p.rule, baseEss: p.baseEss };
  },
  frameworks: { verl: null, trl: null, noEquivalent: 'the ESS-scaled step and the off-policy optimal baseline need the VCPO reference code (a verl fork with fully asynchronous rollouts)' },
  remedies: { ess: 'VCPO (ESS-scaled step)', grad: 'VCPO' },
  labNote: 'VCPO\'s step-size scaling changes the optimizer step, not these per-token weights.',
  sweep: { toy: 'stale', methods: 'vcpo', metric: 'gradNormMax', dir: -1, claim: 'ESS-scaled lr under staleness: smaller spikes, reward tracks', also: ['lrMin', 'essMin', 'success'], outcome: { toy: 'stale', dir: 1, claim: 'stale rollouts still learn' } },
});
