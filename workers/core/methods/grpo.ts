/**
 * GRPO: Group Relative Policy Optimization (DeepSeekMath, arXiv 2402.03300).
 *
 * No critic: each prompt gets G rollouts, and each rollout's advantage is its outcome reward
 * normalized within its group, A_i = (R_i - mean_j R_j) / (std_j R_j + eps), broadcast to every
 * policy token of the rollout (docs/METHODS.md 4.2). A group whose rewards are all equal gets A = 0:
 * the Advantage Collapse this playground makes visible.
 *
 * Implementation details (verl `compute_grpo_outcome_advantage`):
 * 1. std is the unbiased (N-1) std by default, eps = 1e-6 is added to the std, not the variance.
 * 2. A group of size 1 uses mean 0 and std 1 (so A = R), as verl does.
 * 3. Turning `scaleStd` off gives Dr. GRPO's advantage A_i = R_i - mean.
 */
import { defineMethod } from './registry';

export const grpo = defineMethod({
  id: 'grpo',
  name: 'GRPO',
  paper: '2402.03300',
  idea: 'Group-normalized outcome reward as every token\'s advantage; no critic.',
  stage: 'advantage',
  estimator: true,
  conflicts: [],
  params: {
    scaleStd: { kind: 'bool', default: true, label: 'divide by group std', doc: 'Divide the centred reward by the group std (off: Dr. GRPO style).' },
    unbiasedStd: { kind: 'bool', default: true, label: 'unbiased std', doc: 'Use the N-1 (unbiased) std as verl does; off: the population std.' },
    eps: { kind: 'number', default: 1e-6, min: 0, max: 1, scale: 'log', label: 'std epsilon', doc: 'Added to the group std before dividing.' },
  },
  base: true,
  plan(plan, p) {
    Object.assign(plan.advantage, { estimator: 'group', scaleStd: p.scaleStd, unbiasedStd: p.unbiasedStd, eps: p.eps });
  },
  frameworks: {
    verl: (p) => ({
      set: [
        { key: 'algorithm.adv_estimator', value: 'grpo', from: [] },
        { key: 'algorithm.norm_adv_by_std_in_grpo', value: p.scaleStd, from: ['grpo.scaleStd'] },
      ],
      matches: [
        ...(p.unbiasedStd ? [{ param: 'unbiasedStd', reason: 'verl uses the unbiased (N-1) group std' }] : []),
        ...(p.eps === 1e-6 ? [{ param: 'eps', reason: 'verl adds epsilon=1e-6 to the group std' }] : []),
      ],
      unsupported: [
        ...(!p.unbiasedStd ? [{ param: 'unbiasedStd', reason: 'verl always uses the unbiased (N-1) group std' }] : []),
        ...(p.eps !== 1e-6 ? [{ param: 'eps', reason: 'verl fixes the std epsilon at 1e-6 (compute_grpo_outcome_advantage)' }] : []),
      ],
    }),
    trl: (p) => ({
      set: [{ key: 'scale_rewards', value: p.scaleStd ? 'group' : 'none', from: ['grpo.scaleStd'] }],
      matches: [
        ...(p.unbiasedStd ? [{ param: 'unbiasedStd', reason: 'TRL uses the unbiased (N-1) group std' }] : []),
        ...(p.eps === 1e-4 ? [{ param: 'eps', reason: 'TRL adds 1e-4 to the group std' }] : []),
      ],
      unsupported: [
        ...(!p.unbiasedStd ? [{ param: 'unbiasedStd', reason: 'TRL always uses the unbiased (N-1) group std' }] : []),
        ...(p.eps !== 1e-4 ? [{ param: 'eps', reason: 'TRL fixes the std epsilon at 1e-4' }] : []),
      ],
    }),
  },
  sweep: { toy: 'hard', methods: 'grpo', metric: 'allEqual', dir: 0, claim: 'the baseline: collapse plateaus on the hard toy', also: ['success'], outcome: { toy: 'hardPre', dir: 0, claim: 'the baseline from a pretrained start' } },
});
