/**
 * REINFORCE++ (arXiv 2501.03262), docs/METHODS.md 4.7, verl `compute_reinforce_plus_plus_outcome_advantage`.
 *
 * Critic-free REINFORCE with PPO tricks: the token reward is the outcome on the last token minus
 * beta * (logp_old - logp_ref) on every token (KL in the reward), the advantage is the reward-to-go
 * G_t = r_t + gamma G_{t+1}, and advantages are whitened over the whole batch (not per group), so an
 * all-wrong group still gets a signal relative to easier prompts. The baseline variant subtracts the
 * group mean of R first (REINFORCE++-baseline).
 */
import { defineMethod } from './registry';

export const reinforcepp = defineMethod({
  id: 'reinforcepp',
  name: 'REINFORCE++',
  paper: '2501.03262',
  idea: 'Reward-to-go with the KL in the reward, whitened over the whole batch instead of per group.',
  stage: 'advantage',
  estimator: true,
  conflicts: [],
  params: {
    baseline: { kind: 'bool', default: false, label: 'group baseline', doc: 'REINFORCE++-baseline: subtract the group mean reward before whitening.' },
    klInReward: { kind: 'number', default: 0.001, min: 0, max: 1, label: 'KL in reward', doc: 'beta of the per-token penalty -beta (logp_old - logp_ref) in the reward.' },
    gamma: { kind: 'number', default: 1, min: 0, max: 1, label: 'gamma', doc: 'Discount of the reward-to-go (verl: 1).' },
  },
  plan(plan, p) {
    Object.assign(plan.advantage, { estimator: 'reinforce', baseline: p.baseline, klInReward: p.klInReward, gamma: p.gamma });
    plan.whiten = true;
  },
  frameworks: {
    verl: (p) => ({
      set: [{ key: 'algorithm.adv_estimator', value: p.baseline ? 'reinforce_plus_plus_baseline' : 'reinforce_plus_plus', from: ['reinforcepp.baseline'] }],
      matches: p.gamma === 1 ? [{ param: 'gamma', reason: "verl's algorithm.gamma defaults to 1.0" }] : [],
      unsupported: [
        ...(p.gamma !== 1 ? [{ param: 'gamma', reason: 'set algorithm.gamma by hand (not exported)' }] : []),
        { param: 'klInReward', reason: 'set algorithm.use_kl_in_reward=True and algorithm.kl_ctrl.kl_coef by hand (not exported)' },
      ],
    }),
    trl: null,
    noEquivalent: "TRL's GRPOTrainer whitens per group, not over the batch, and has no KL in the reward",
  },
  sweep: { toy: 'hard', methods: 'reinforcepp', metric: 'zeroAdv', dir: -1, claim: 'batch whitening: collapsed groups still get nonzero advantages', also: ['success'], outcome: { toy: 'hardPre', dir: 1, claim: 'lifts success on hard prompts from a competent start' } },
});
