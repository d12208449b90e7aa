/**
 * IGPO: Information Gain-based Policy Optimization (arXiv 2510.14967), docs/METHODS.md 5.1.
 *
 * Each turn's reward is the gain in the policy's own probability of the ground-truth answer:
 * p_t = exp(mean log pi(answer | context after turn t)), teacher-forced with the rollout policy;
 * r_t = p_{t+1} - p_t (prob_diff, the paper's form) or the difference of mean log-probs
 * (log_prob_diff, the updated repo's default). The final turn gets the outcome reward. Rewards
 * are z-scored within the group (joint: one pool; separate: outcome and information-gain rewards
 * apart, the shipped script's choice), then summed backwards over turns with gamma and broadcast to
 * each turn's tokens. All-wrong groups still differ in information gain: no Advantage Collapse.
 */
import { defineMethod } from './registry';

export const igpo = defineMethod({
  id: 'igpo',
  name: 'IGPO',
  paper: '2510.14967',
  idea: 'Per-turn reward = gain in the policy\'s own probability of the true answer; turn-level advantages.',
  stage: 'reward',
  estimator: true,
  conflicts: [],
  params: {
    igType: { kind: 'choice', default: 'prob_diff', options: ['prob_diff', 'log_prob_diff'], label: 'information gain', doc: 'p_t - p_{t-1} (paper) or the difference of mean log-probs (updated repo).' },
    norm: { kind: 'choice', default: 'separate', options: ['separate', 'joint'], label: 'normalization', doc: 'z-score outcome and information-gain rewards apart (shipped script) or in one pool.' },
    gamma: { kind: 'number', default: 1, min: 0, max: 1, label: 'gamma', doc: 'Turn discount of the backward sum of normalized turn rewards.' },
  },
  plan(plan, p) {
    Object.assign(plan.advantage, { estimator: 'turn', separate: p.norm === 'separate', gamma: p.gamma });
    plan.infoGain = { igType: p.igType };
  },
  frameworks: { verl: null, trl: null, noEquivalent: 'information-gain turn rewards need the reference IGPO code (a verl fork), not an option of either framework' },
  remedies: { collapse: 'IGPO (information-gain turn rewards)' },
});
