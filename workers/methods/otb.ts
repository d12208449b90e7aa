/**
 * OTB: Optimal Token Baseline (arXiv 2602.07078), docs/METHODS.md 5.13, verl
 * `compute_optimal_token_baseline_advantage` (multi-turn form: positions over valid tokens).
 *
 * A per-token variance-optimal baseline: at position t, B*_t = sum_i G_i W_{i,t} / sum_i W_{i,t}
 * over the group, with the path weight W_{i,t} = sum_{j<=t} (1 - 2 pi_j + sum pi^2), the exact
 * squared score norm of a softmax (forward-only proxy). A = G - B*_t, no std. All-equal rewards
 * still give 0: OTB lowers variance, it does not fight collapse.
 */
import { defineMethod } from './registry';

export const otb = defineMethod({
  id: 'otb',
  name: 'OTB',
  paper: '2602.07078',
  idea: 'Per-token baseline weighted by the cumulative squared score norm (variance-optimal).',
  stage: 'advantage',
  estimator: true,
  conflicts: [],
  params: {},
  plan(plan) {
    plan.advantage.otb = true;
  },
  frameworks: {
    verl: () => ({ set: [{ key: 'algorithm.adv_estimator', value: 'optimal_token_baseline', from: [] }] }),
    trl: null,
    noEquivalent: 'TRL has no optimal token baseline',
  },
  remedies: { grad: 'OTB (optimal token baseline)' },
});
