/**
 * Token rejection: masked IS at the token level against a sampler that is not the trainer
 * (docs/METHODS.md 5.19; verl's rollout_rs=token_k1/k2/k3). With lr = clamp(logp_old -
 * logp_rollout, +-20), a token leaves the loss mask when its statistic is out of bounds
 * (volcengine/verl@b178a3cd5 rollout_corr_helper.py:221-224, 271-281): k1 = -lr within
 * [log lower, log upper], so the default "0.5_2.0" keeps 0.5 <= rho <= 2 (an asymmetric pair
 * bounds 1/rho); k2 = lr^2 / 2 <= upper; k3 = exp(lr) - 1 - lr <= upper. No weights: the kept
 * tokens train as they are (test_rollout_corr.py:311-365).
 */
import { defineMethod } from './registry';
import { addRejection, CALCULATE_LOG_PROBS, CORRECTION_LAB_NOTE, REJECTION_CONFLICTS, rsSpec, VERL_RC } from './rolloutCorrectionShared';

export const tokenrs = defineMethod({
  id: 'tokenrs',
  name: 'Token RS',
  paper: '2512.23075',
  idea: 'Drop from the loss every token whose trainer/sampler ratio is out of bounds (token-level rejection).',
  stage: 'filtering',
  labNote: CORRECTION_LAB_NOTE,
  ...REJECTION_CONFLICTS,
  params: {
    estimator: { kind: 'choice', default: 'k1', options: ['k1', 'k2', 'k3'], label: 'statistic', doc: 'k1: -log rho within [log lower, log upper]; k2: (log rho)^2 / 2 <= upper; k3: rho - 1 - log rho <= upper (verl token_k1/k2/k3).' },
    lower: { kind: 'number', default: 0.5, min: 1e-6, max: 1, scale: 'log', label: 'lower bound', doc: 'k1 only: the lower ratio bound of verl\'s "lower_upper" (it bounds pi_rollout / pi_train).' },
    upper: { kind: 'number', default: 2, min: 1e-6, max: 1e6, scale: 'log', label: 'upper bound', doc: 'k1: the upper ratio bound; k2, k3: the bound on the statistic (typical 1.5-3 for k2).' },
  },
  plan(plan, p) {
    const option = `token_${p.estimator}` as const;
    addRejection(plan, option, rsSpec(option, p.lower, p.upper));
  },
  frameworks: {
    verl: (p) => ({
      set: [
        { key: `${VERL_RC}.rollout_rs`, value: `token_${p.estimator}`, from: ['tokenrs.estimator'], chain: ',' },
        { key: `${VERL_RC}.rollout_rs_threshold`, value: rsSpec(`token_${p.estimator}`, p.lower, p.upper), from: ['tokenrs.lower', 'tokenrs.upper'], chain: ',' },
        CALCULATE_LOG_PROBS,
      ],
    }),
    trl: null,
    noEquivalent: 'TRL\'s token_mask also weights the kept tokens by their ratio (masked IS), where verl\'s rejection only masks',
  },
});
