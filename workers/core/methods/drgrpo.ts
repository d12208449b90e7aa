/**
 * Dr. GRPO: "Understanding R1-Zero-Like Training" (arXiv 2503.20783), docs/METHODS.md 4.3.
 *
 * Removes GRPO's two normalization biases: the advantage is R_i - mean_j R_j (no division by the
 * group std, which up-weights too-easy and too-hard prompts), and the loss is the token sum over a
 * constant normalizer, G * L_max (seq-mean-token-sum-norm), so long wrong answers are not cheaper.
 * verl: norm_adv_by_std_in_grpo=False + loss_agg_mode=seq-mean-token-sum-norm; TRL loss_type="dr_grpo".
 */
import { defineMethod } from './registry';

export const drgrpo = defineMethod({
  id: 'drgrpo',
  name: 'Dr. GRPO',
  paper: '2503.20783',
  idea: 'GRPO without the std division and with a constant length normalizer: no difficulty or length bias.',
  stage: 'advantage',
  estimator: true,
  conflicts: ['gspo', 'gmpo', 'sampo', 'dapo', 'vcpo', 'seeupo'],
  params: {},
  plan(plan) {
    plan.advantage.scaleStd = false;
    plan.lossAgg = 'seq-mean-token-sum-norm';
  },
  frameworks: {
    verl: () => ({
      set: [
        { key: 'algorithm.adv_estimator', value: 'grpo', from: [] },
        { key: 'algorithm.norm_adv_by_std_in_grpo', value: false, from: [] },
      ],
    }),
    trl: () => ({ set: [{ key: 'scale_rewards', value: 'none', from: [] }] }),
  },
  sweep: { toy: 'search', methods: 'drgrpo', metric: 'tokens', dir: -1, claim: 'no length bias: wrong answers do not drift longer (fewer tokens)', also: ['success'], outcome: { toy: 'search', dir: 0, claim: 'same success with fewer tokens' } },
});
