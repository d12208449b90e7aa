/**
 * OTB: Optimal Token Baseline (arXiv 2602.07078), docs/METHODS.md 5.13, verl
 * `compute_optimal_token_baseline_advantage` (multi-turn form: positions over valid tokens).
 *
 * A per-token variance-optimal baseline: at position t, B*_t = sum_i G_i W_{i,t} / sum_i W_{i,t}
 * over the group, with the path weight W_{i,t} = sum_{j<=t} (1 - 2 pi_j + sum pi^2), the exact
 * squared score norm of a softmax (forward-only proxy). A = G - B*_t, no std. All-equal rewards
 * still give 0: OTB lowers variance, it does not fight collapse. As verl's multi-turn version does
 * by default (volcengine/verl@b178a3cd verl/trainer/ppo/core_algos.py:884, 983-993; its docstring
 * says otherwise), where the group's longest trajectory alone has positions its baseline is 0.
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
  params: {
    zeroTail: { kind: 'bool', default: true, label: 'zero tail', doc: 'Where the group\'s longest trajectory alone has tokens, its baseline is 0 (verl\'s handle_zero_tail, on in its multi-turn version); off departs from the reference.' },
  },
  plan(plan, p) {
    plan.advantage.otb = true;
    plan.advantage.zeroTail = p.zeroTail;
  },
  frameworks: {
    verl: (p) => ({
      set: [{ key: 'algorithm.adv_estimator', value: 'optimal_token_baseline', from: [] }],
      matches: p.zeroTail ? [{ param: 'zeroTail', reason: "verl's multi-turn OTB applies handle_zero_tail by default" }] : [],
      unsupported: p.zeroTail ? [] : [{ param: 'zeroTail', reason: "verl's multi-turn OTB always applies handle_zero_tail; there is no option to turn it off" }],
    }),
    trl: null,
    noEquivalent: 'TRL has no optimal token baseline',
  },
  remedies: { grad: 'OTB (optimal token baseline)' },
  sweep: { toy: 'group4', methods: 'otb', metric: 'gradNormStd', dir: -1, claim: 'per-token optimal baseline: lower gradient variance', also: ['success'], outcome: { toy: 'group4', dir: 1, claim: 'lower variance learns faster' } },
});
