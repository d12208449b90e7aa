/**
 * The catastrophic-token veto (docs/METHODS.md 5.19): a rollout with any token whose
 * trainer/sampler ratio is below tau, lr < log tau on the unclamped log-ratio, leaves the loss
 * whole. verl had it as algorithm.rollout_correction.rollout_token_veto_threshold until
 * 97eac9048 (rollout_corr_helper.py:656-681 at its parent 9b718e1a7, tau = 1e-4 in its presets,
 * algorithm.py:236); at b178a3cd5 it is gone (its docs/examples/config.rst:138 and 565 still list
 * it) and the two-sided seq_max_k2 / seq_max_k3 rejection (seqrs) took its place.
 */
import { defineMethod } from './registry';
import { CORRECTION_LAB_NOTE, correctionOf, REJECTION_CONFLICTS } from './rolloutCorrectionShared';

export const veto = defineMethod({
  id: 'veto',
  name: 'Catastrophic-token veto',
  paper: '2512.23075',
  idea: 'Drop a whole rollout from the loss when any of its tokens is far less likely under the trainer than under the sampler.',
  stage: 'filtering',
  labNote: CORRECTION_LAB_NOTE,
  ...REJECTION_CONFLICTS,
  params: {
    tau: { kind: 'number', default: 1e-4, min: 1e-12, max: 1, scale: 'log', label: 'veto threshold', doc: 'A token with pi_train / pi_rollout below tau vetoes its rollout (verl\'s removed rollout_token_veto_threshold; its presets used 1e-4).' },
  },
  plan(plan, p) {
    correctionOf(plan).vetoThreshold = p.tau;
  },
  frameworks: {
    verl: null,
    trl: null,
    noEquivalent: 'verl removed rollout_token_veto_threshold in 97eac9048 (its successor is rollout_rs=seq_max_k2, two-sided: the seqrs entry); TRL never had it',
  },
});
