/**
 * GSPO: Group Sequence Policy Optimization (arXiv 2507.18071), docs/METHODS.md 4.5.
 *
 * The importance ratio and its clip act on whole sequences: s_i = exp(mean_t (logp - logp_old)),
 * the length-normalized (geometric-mean) sequence ratio, clipped to [1 - 3e-4, 1 + 4e-4]. As verl
 * implements it (GSPO-token), every token carries the value s_i and the gradient s_i * d logp_t, and
 * the loss is seq-mean-token-mean. One outlier token moves s_i only by exp(delta / |o_i|).
 */
import { defineMethod } from './registry';
import { carried } from './frameworkHelpers';

export const gspo = defineMethod({
  id: 'gspo',
  name: 'GSPO',
  paper: '2507.18071',
  idea: 'Sequence-level ratio (geometric mean over tokens) and sequence-level clipping.',
  stage: 'ratio',
  conflicts: ['gmpo', 'seeupo', 'sampo', 'dapo', 'drgrpo'],
  params: {
    clipLow: { kind: 'number', default: 3e-4, min: 0, max: 1, scale: 'log', label: 'clip low', doc: 'Sequence-ratio floor 1 - clipLow (GSPO: 3e-4).' },
    clipHigh: { kind: 'number', default: 4e-4, min: 0, max: 10, scale: 'log', label: 'clip high', doc: 'Sequence-ratio ceiling 1 + clipHigh (GSPO: 4e-4).' },
  },
  plan(plan, p) {
    plan.ratio = { mode: 'sequence', clipLow: p.clipLow, clipHigh: p.clipHigh };
    plan.lossAgg = 'seq-mean-token-mean';
  },
  frameworks: {
    verl: () => ({
      set: [{ key: 'actor_rollout_ref.actor.policy_loss.loss_mode', value: 'gspo', from: [] }],
      matches: [carried('clipLow', 'clip_ratio_low'), carried('clipHigh', 'clip_ratio_high')],
    }),
    trl: () => ({
      set: [{ key: 'importance_sampling_level', value: 'sequence', from: [] }],
      matches: [carried('clipLow', 'epsilon'), carried('clipHigh', 'epsilon_high')],
    }),
  },
  remedies: { ess: 'GSPO (sequence-level ratio)', grad: 'GSPO' },
  sweep: { toy: 'epochs', methods: 'grpo,gspo', metric: 'ratioMax', dir: -1, claim: 'sequence ratio: outlier tokens do not dominate (smaller max ratio)', also: ['gradNormMax', 'success'], outcome: { toy: 'epochs', dir: 1, claim: 'steadier off-policy updates learn faster' } },
});
