/**
 * RLOO: REINFORCE Leave-One-Out ("Back to Basics", arXiv 2402.14740), docs/METHODS.md 4.6.
 *
 * Each rollout's baseline is the mean reward of the other G-1 rollouts of its prompt:
 * A_i = R_i - (sum_j R_j - R_i) / (G - 1) = G/(G-1) (R_i - mean). Unbiased, no critic, no std.
 * As in verl, the advantage goes into the PPO clipped surrogate (a group of one keeps A = R).
 */
import { defineMethod } from './registry';

export const rloo = defineMethod({
  id: 'rloo',
  name: 'RLOO',
  paper: '2402.14740',
  idea: 'Leave-one-out baseline: each rollout is compared with the mean of the other rollouts of its prompt.',
  stage: 'advantage',
  estimator: true,
  conflicts: [],
  params: {},
  plan(plan) {
    plan.advantage.estimator = 'rloo';
  },
  frameworks: {
    verl: () => ({ set: [{ key: 'algorithm.adv_estimator', value: 'rloo', from: [] }] }),
    trl: null,
    noEquivalent: "TRL's GRPOTrainer has no leave-one-out baseline (RLOOTrainer is a separate trainer)",
  },
  sweep: { toy: 'group4', methods: 'rloo', metric: 'success', dir: 0, claim: 'same collapse as GRPO, unbiased baseline at small G', also: ['allEqual'], outcome: { toy: 'group4', dir: 0, claim: 'a reference curve' } },
});
