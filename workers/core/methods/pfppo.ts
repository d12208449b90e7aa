/**
 * PF-PPO: Policy Filtration for PPO (arXiv 2409.06957), docs/METHODS.md 5.5, verl `compute_pf_ppo_reweight_data`.
 *
 * A reward model is more reliable at its extremes than in the middle. PF-PPO reweights the batch
 * by the reward-model score S_i before the update: pow w = |S|^k, max_min (only the best and the
 * worst), or max_random (0.4 for the best, 0.1 otherwise), then resamples B rollouts with
 * replacement in proportion to w (here as multiplicities on each rollout's loss weight, which is the
 * same loss). As verl does (volcengine/verl@b178a3cd verl/trainer/ppo/core_algos.py:1936-1954),
 * the weights and the best/worst are over the whole batch; `scope: group` takes them per prompt
 * (a best/worst-of-N reading of the paper, which departs from the reference code). Pair it with
 * the task's reward-model noise (env.rmNoise).
 */
import { defineMethod } from './registry';

export const pfppo = defineMethod({
  id: 'pfppo',
  name: 'PF-PPO',
  paper: '2409.06957',
  idea: 'Train on the rollouts whose reward-model scores are reliable (the extremes), resampled by weight.',
  stage: 'filtering',
  conflicts: [],
  inferred: 'The per-prompt scope (an option) is a reading of the paper, not verified; the default follows verl, which weights over the whole batch.',
  params: {
    weighting: { kind: 'choice', default: 'max_min', options: ['pow', 'max_min', 'max_random'], label: 'reweighting', doc: 'pow: |S|^k; max_min: best and worst only; max_random: 0.4 best, 0.1 others.' },
    pow: { kind: 'number', default: 2, min: 0, max: 8, label: 'power k', doc: 'Exponent of the pow weighting.' },
    scope: { kind: 'choice', default: 'batch', options: ['batch', 'group'], label: 'scope', doc: 'Best/worst over the whole batch (verl), or per prompt group (a reading of the paper; departs from the reference code).' },
  },
  plan(plan, p) {
    plan.resample = { weighting: p.weighting, pow: p.pow, scope: p.scope };
  },
  frameworks: {
    verl: (p) => ({
      set: [
        { key: 'algorithm.use_pf_ppo', value: true, from: [] },
        { key: 'algorithm.pf_ppo.reweight_method', value: p.weighting, from: ['pfppo.weighting'] },
        { key: 'algorithm.pf_ppo.weight_pow', value: p.pow, from: ['pfppo.pow'] },
      ],
      matches: p.scope === 'batch' ? [{ param: 'scope', reason: 'verl takes the best and worst over the whole batch' }] : [],
      unsupported: p.scope === 'group' ? [{ param: 'scope', reason: 'verl takes the best and worst over the whole batch, not per prompt group' }] : [],
    }),
    trl: null,
    noEquivalent: 'TRL has no reward-reliability resampling',
  },
  sweep: { toy: 'noisyRm', methods: 'grpo,pfppo', metric: 'success', dir: 1, claim: 'training on reliable (extreme) scores: true success rises faster', outcome: { toy: 'noisyRmPre', dir: 1, claim: 'reliable scores lift true success from a competent start' } },
});
