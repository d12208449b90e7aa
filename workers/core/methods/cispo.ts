/**
 * CISPO: Clipped IS-weight Policy Optimization (MiniMax-M1, arXiv 2506.13585), docs/METHODS.md 5.15.
 *
 * PPO clips the surrogate, so a token whose ratio leaves [1 - eps_low, 1 + eps_high] on the
 * improving side gets no gradient at all. CISPO clips the importance weight itself and stops its
 * gradient: L = -sg(clip(r, 1 - eps_low, 1 + eps_high)) A log pi. Every token keeps a gradient, a
 * clipped one with the bound as its weight. ARLArena calls this a tolerant clip: it learns fast early,
 * and negative-advantage tokens with large ratios keep pushing (their weight is capped, their
 * gradient is not removed). As verl's `compute_policy_loss_cispo` (loss_mode cispo, which reads the
 * actor's clip_ratio_low and clip_ratio_high as the weight's bounds), with token-mean aggregation.
 */
import { defineMethod } from './registry';
import { carried } from './frameworkHelpers';

export const cispo = defineMethod({
  id: 'cispo',
  name: 'CISPO',
  paper: '2506.13585',
  idea: 'Clip the importance weight, not the surrogate: every token keeps a gradient (a tolerant clip).',
  stage: 'ratio',
  conflicts: ['gspo', 'gmpo', 'seeupo', 'sampo', 'dapo', 'vcpo'],
  params: {
    clipLow: { kind: 'number', default: 0.2, min: 0, max: 1, label: 'weight floor offset', doc: 'The IS weight is clipped below at 1 - this.' },
    clipHigh: { kind: 'number', default: 0.2, min: 0, max: 10, label: 'weight ceiling offset', doc: 'The IS weight is clipped above at 1 + this.' },
  },
  plan(plan, p) {
    plan.ratio = { mode: 'cispo', weightLow: p.clipLow, weightHigh: p.clipHigh };
  },
  frameworks: {
    verl: () => ({
      set: [{ key: 'actor_rollout_ref.actor.policy_loss.loss_mode', value: 'cispo', from: [] }],
      matches: [carried('clipLow', 'clip_ratio_low'), carried('clipHigh', 'clip_ratio_high')],
    }),
    trl: null,
    noEquivalent: "TRL's GRPOConfig clips the surrogate (epsilon), not the importance weight",
  },
  sweep: { toy: 'epochs', methods: 'grpo,cispo', metric: 'gradNormMax', dir: 1, claim: 'a tolerant clip: clipped tokens keep their gradient, so updates are larger', also: ['ratioMax', 'success'], outcome: { toy: 'epochs', dir: 1, claim: 'tolerant clipping gains fast early' } },
});
