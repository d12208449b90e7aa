/**
 * IGPO: Information Gain-based Policy Optimization (arXiv 2510.14967), docs/METHODS.md 5.1.
 *
 * Each turn's reward is the gain in the policy's own probability of the ground-truth answer:
 * p_t = exp(mean log pi(answer | context after turn t)), teacher-forced with the rollout policy;
 * r_t = the difference of mean log-probs (log_prob_diff) or p_{t+1} - p_t (prob_diff, the paper's
 * form). The final turn gets the outcome reward. Rewards are z-scored within the group (separate:
 * outcome and information-gain rewards apart; joint: one pool), then summed backwards over turns
 * with gamma and broadcast to each turn's tokens. All-wrong groups still differ in information
 * gain: no Advantage Collapse.
 *
 * As the reference code does it (GuoqingWang1/IGPO@49a8c4ec verl/trainer/ppo/core_algos.py,
 * compute_grpo_outcome_advantage and compute_group_stats): a gain of exactly 0 is no element of
 * any pool and no turn boundary, so that turn's tokens take the next boundary turn's advantage; a
 * pool of one value is its own mean (it normalizes to 0); the std is sqrt(var_pop + 1e-8), plus
 * 1e-6 when dividing. The shipped training script pairs log_prob_diff with separate
 * (train.sh:57-58), the defaults here; prob_diff and joint are the options the paper and the
 * function's own default describe.
 */
import { defineMethod } from './registry';

export const igpo = defineMethod({
  id: 'igpo',
  name: 'IGPO',
  paper: '2510.14967',
  idea: 'Per-turn reward = gain in the policy\'s own probability of the true answer; turn-level advantages.',
  stage: 'reward',
  estimator: true,
  signalOnTies: true,
  conflicts: [],
  params: {
    igType: { kind: 'choice', default: 'log_prob_diff', options: ['log_prob_diff', 'prob_diff'], label: 'information gain', doc: 'The difference of mean log-probs (the reference script) or p_t - p_{t-1} (the paper\'s form; departs from the script).' },
    norm: { kind: 'choice', default: 'separate', options: ['separate', 'joint'], label: 'normalization', doc: 'z-score outcome and information-gain rewards apart (shipped script) or in one pool.' },
    gamma: { kind: 'number', default: 1, min: 0, max: 1, label: 'gamma', doc: 'Turn discount of the backward sum of normalized turn rewards.' },
  },
  plan(plan, p) {
    Object.assign(plan.advantage, { estimator: 'turn', separate: p.norm === 'separate', gamma: p.gamma });
    plan.infoGain = { igType: p.igType };
  },
  frameworks: { verl: null, trl: null, noEquivalent: 'information-gain turn rewards need the reference IGPO code (a verl fork), not an option of either framework' },
  remedies: { collapse: 'IGPO (information-gain turn rewards)' },
  sweep: { toy: 'hard', methods: 'igpo', metric: 'zeroAdv', dir: -1, claim: 'information-gain turn rewards: all-wrong groups still learn', also: ['success'], outcome: { toy: 'hardPre', dir: 1, claim: 'lifts success on hard prompts from a competent start' } },
});
