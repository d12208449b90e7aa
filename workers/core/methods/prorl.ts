/**
 * ProRL: Prolonged RL with reference resets (arXiv 2505.24864), docs/METHODS.md 5.11.
 *
 * Long runs with a KL penalty to the reference policy; every `resetEvery` iterations the reference
 * is hard-reset to the current policy and Adam's moments are zeroed, so the KL term does not grow
 * until it pins the policy. Pair it with clip-higher (DAPO) as the paper does.
 */
import { defineMethod } from './registry';
import { carried } from './frameworkHelpers';

export const prorl = defineMethod({
  id: 'prorl',
  name: 'ProRL',
  paper: '2505.24864',
  idea: 'KL to a reference policy that is periodically reset to the current one, with the optimizer state.',
  stage: 'optimizer',
  conflicts: [],
  inferred: 'beta and the reset schedule are not published in reach: a fixed period is used.',
  params: {
    klCoef: { kind: 'number', default: 0.05, min: 0, max: 1, label: 'KL coef', doc: 'beta of the k3 KL to the reference (replaces the global KL coef).' },
    resetEvery: { kind: 'int', default: 50, min: 1, max: 100000, label: 'reset every', doc: 'Iterations between reference and optimizer resets.' },
  },
  plan(plan, p) {
    plan.kl.coef = p.klCoef;
    plan.refResetEvery = p.resetEvery;
  },
  frameworks: {
    verl: () => ({
      set: [],
      matches: [carried('klCoef', 'kl_loss_coef')],
      unsupported: [{ param: 'resetEvery', reason: 'verl has no reference-policy reset; restart from a checkpoint with a new reference' }],
    }),
    trl: (p) => ({
      set: [],
      matches: [carried('klCoef', 'beta')],
      unsupported: [{ param: 'resetEvery', reason: `TRL's sync_ref_model copies the policy into the reference every ref_model_sync_steps (${p.resetEvery} here would be that), not exported` }],
    }),
  },
  remedies: { entropy: 'ProRL (KL + reference reset)' },
  labNote: 'ProRL resets the reference policy between iterations: the frozen batch shows its KL term only.',
  sweep: { toy: 'kl', methods: 'grpo,prorl', set: { 'prorl.klCoef': '0.05', 'prorl.resetEvery': '30' }, metric: 'klMean', dir: -1, claim: 'reference resets: KL saws back to 0, reward keeps rising', also: ['success'], outcome: { toy: 'kl', dir: 1, claim: 'resets let reward keep rising under KL' } },
});
