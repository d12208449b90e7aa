/**
 * Dr. GRPO: "Understanding R1-Zero-Like Training" (arXiv 2503.20783), METHODS.md 4.3.
 *
 * Removes GRPO's two normalization biases: the advantage is R_i - mean_j R_j (no division by the
 * group std, which up-weights too-easy and too-hard prompts), and the loss is the token sum over a
 * constant normalizer, G * L_max (seq-mean-token-sum-norm), so long wrong answers are not cheaper.
 * verl: norm_adv_by_std_in_grpo=False + loss_agg_mode=seq-mean-token-sum-norm; TRL loss_type="dr_grpo".
 */
import type { MethodDef } from './registry';

export const drgrpo = {
  id: 'drgrpo',
  name: 'Dr. GRPO',
  paper: '2503.20783',
  idea: 'GRPO without the std division and with a constant length normalizer: no difficulty or length bias.',
  stage: 'advantage',
  estimator: true,
  conflicts: ['gspo', 'gmpo', 'sampo', 'dapo', 'vcpo', 'seeupo'],
  params: {},
} as const satisfies MethodDef;
