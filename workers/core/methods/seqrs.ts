/**
 * Sequence rejection: masked IS at the sequence level against a sampler that is not the trainer
 * (docs/METHODS.md 5.19; verl's rollout_rs=seq_sum_* / seq_mean_k2,k3 / seq_max_*). A rollout
 * leaves the loss whole when the sum, mean or max over its tokens of k1 = -lr, k2 = lr^2 / 2 or
 * k3 = exp(lr) - 1 - lr (lr clamped to +-20) is out of bounds (volcengine/verl@b178a3cd5
 * rollout_corr_helper.py:282-331). The default, seq_sum_k1 with "0.5_2.0", is Seq-MIS
 * (decoupled_seq_is_rs, algorithm.py:210-231): 0.5 <= prod_t rho_t <= 2. seq_max_k2 and
 * seq_max_k3 are the trust-region masking that replaced the catastrophic-token veto (97eac9048).
 * The geometric mean, seq_mean_k1, is its own entry (geors).
 */
import { defineMethod } from './registry';
import { addRejection, CALCULATE_LOG_PROBS, CORRECTION_LAB_NOTE, REJECTION_CONFLICTS, rsSpec, VERL_RC } from './rolloutCorrectionShared';

const OPTIONS = ['seq_sum_k1', 'seq_sum_k2', 'seq_sum_k3', 'seq_mean_k2', 'seq_mean_k3', 'seq_max_k2', 'seq_max_k3'] as const;

export const seqrs = defineMethod({
  id: 'seqrs',
  name: 'Seq-MIS',
  paper: '2512.23075',
  idea: 'Drop from the loss every rollout whose sequence-level trainer/sampler divergence is out of bounds (sequence-level rejection).',
  stage: 'filtering',
  labNote: CORRECTION_LAB_NOTE,
  ...REJECTION_CONFLICTS,
  params: {
    option: { kind: 'choice', default: 'seq_sum_k1', options: OPTIONS, label: 'statistic', doc: 'verl\'s rollout_rs: the sum, mean or max over the rollout\'s tokens of k1 = -log rho, k2 = (log rho)^2 / 2 or k3 = rho - 1 - log rho.' },
    lower: { kind: 'number', default: 0.5, min: 1e-6, max: 1, scale: 'log', label: 'lower bound', doc: 'seq_sum_k1 only: the lower ratio bound of verl\'s "lower_upper" (it bounds prod pi_rollout / pi_train).' },
    upper: { kind: 'number', default: 2, min: 1e-6, max: 1e6, scale: 'log', label: 'upper bound', doc: 'seq_sum_k1: the upper ratio bound; the others: the bound on the statistic (verl\'s k3 presets use 0.01 for the mean).' },
  },
  plan(plan, p) {
    addRejection(plan, p.option, rsSpec(p.option, p.lower, p.upper));
  },
  frameworks: {
    verl: (p) => ({
      set: [
        { key: `${VERL_RC}.rollout_rs`, value: p.option, from: ['seqrs.option'], chain: ',' },
        { key: `${VERL_RC}.rollout_rs_threshold`, value: rsSpec(p.option, p.lower, p.upper), from: ['seqrs.lower', 'seqrs.upper'], chain: ',' },
        CALCULATE_LOG_PROBS,
      ],
    }),
    trl: null,
    noEquivalent: 'TRL\'s sequence_mask also weights the kept rollouts by their sequence ratio (masked IS), where verl\'s rejection only masks',
  },
});
