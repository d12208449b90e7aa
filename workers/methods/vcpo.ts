/**
 * VCPO: Variance-Controlled Policy Optimization (arXiv 2602.17616), docs/METHODS.md 5.10, mit-han-lab/vcpo.
 *
 * For stale (off-policy) rollouts -- set `staleness` to sample from the policy k updates old:
 * 1. the learning rate of each update is scaled by the effective sample size of the sequence IS
 *    weights w_i = exp(sum_t logp_old - logp_rollout): lr * sqrt(min(1, ESS/(N rho_base))) (or
 *    linear), computed in log space;
 * 2. the off-policy optimal baseline b = sum w^2 |g|^2 R / sum w^2 |g|^2 per group, with the
 *    closed-form score norm |g|^2 = sum_t (1 - 2 pi_t + sum pi^2), A = (R - b)/std, times the
 *    truncated sequence IS weight min(w_i, isCap);
 * 3. no PPO clipping, seq-mean-token-mean.
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
  },
  plan(plan, p) {
    Object.assign(plan.advantage, { estimator: 'opob', scaleStd: true, isCap: p.isCap });
    // VCPO's recipe: no PPO clipping (clip_ratio_low 1.0, high 1e9), seq-mean-token-mean.
    Object.assign(plan.ratio, { clipLow: 1, clipHigh: 10 });
    plan.lossAgg = 'seq-mean-token-mean';
    plan.essLr = { rule: p.rule, baseEss: p.baseEss };
  },
  frameworks: { verl: null, trl: null, noEquivalent: 'the ESS-scaled step and the off-policy optimal baseline need the VCPO reference code (a verl fork with fully asynchronous rollouts)' },
  remedies: { ess: 'VCPO (ESS-scaled step)', grad: 'VCPO' },
  labNote: 'VCPO\'s step-size scaling changes the optimizer step, not these per-token weights.',
});
