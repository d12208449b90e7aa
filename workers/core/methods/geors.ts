/**
 * Geometric rejection (Geo-RS) against a sampler that is not the trainer (docs/METHODS.md 5.19;
 * verl's rollout_rs=seq_mean_k1): a rollout leaves the loss whole when the mean over its tokens of
 * -lr (lr = clamp(logp_old - logp_rollout, +-20)) is outside [log lower, log upper], i.e. its
 * geometric-mean ratio is out of bounds (volcengine/verl@b178a3cd5 rollout_corr_helper.py:301-319).
 * Length-invariant, so long rollouts are not rejected for their length (rollout_corr_math.md
 * 3.3.3); "0.999_1.001" as decoupled_geo_rs (algorithm.py:235-254).
 */
import { defineMethod } from './registry';
import { addRejection, CALCULATE_LOG_PROBS, CORRECTION_LAB_NOTE, REJECTION_CONFLICTS, rsSpec, VERL_RC } from './rolloutCorrectionShared';

export const geors = defineMethod({
  id: 'geors',
  name: 'Geo-RS',
  paper: '2512.23075',
  idea: 'Drop from the loss every rollout whose geometric-mean trainer/sampler ratio leaves a narrow band around 1.',
  stage: 'filtering',
  labNote: CORRECTION_LAB_NOTE,
  ...REJECTION_CONFLICTS,
  params: {
    lower: { kind: 'number', default: 0.999, min: 1e-6, max: 1, label: 'lower bound', doc: 'Lower bound of the geometric-mean ratio as verl\'s "lower_upper" gives it (it bounds pi_rollout / pi_train per token).' },
    upper: { kind: 'number', default: 1.001, min: 1, max: 1e6, label: 'upper bound', doc: 'Upper bound of the geometric-mean ratio (verl presets: 1.001).' },
  },
  plan(plan, p) {
    addRejection(plan, 'seq_mean_k1', rsSpec('seq_mean_k1', p.lower, p.upper));
  },
  frameworks: {
    verl: (p) => ({
      set: [
        { key: `${VERL_RC}.rollout_rs`, value: 'seq_mean_k1', from: [], chain: ',' },
        { key: `${VERL_RC}.rollout_rs_threshold`, value: rsSpec('seq_mean_k1', p.lower, p.upper), from: ['geors.lower', 'geors.upper'], chain: ',' },
        CALCULATE_LOG_PROBS,
      ],
    }),
    trl: null,
    noEquivalent: 'TRL has no geometric-mean rejection of the sampler\'s rollouts',
  },
});
