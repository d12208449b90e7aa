/**
 * ARLArena / SAMPO (arXiv 2602.21534), docs/METHODS.md 5.9, WillDreamer/ARL-Arena.
 *
 * SAMPO = GSPO's sequence-level clip (3e-3 / 4e-3) with seq-mean-token-mean, GiGPO advantages
 * (episode advantage R - mean plus omega times a step advantage: the discounted step return minus
 * its mean over the steps, across the group, that start from the same observation -- anchor states),
 * dynamic filtering of all-equal groups after `coldStart` iterations, and a k3 KL of 0.01 in the
 * loss (train_sampo.sh:75-78).
 *
 * The reference trains on one row per step (WillDreamer/ARL-Arena@a25a2a2
 * recipe/shop_agent/ppo/core_algos.py:1069, 1103-1111), so as it does: the episode statistics are
 * taken over the group's step rows (a trajectory counts once per step), an anchor set of one step
 * has mean 0, and GSPO's sequence ratio and the seq-mean-token-mean aggregation are per step.
 */
import { defineMethod } from './registry';
import { carried } from './frameworkHelpers';

export const sampo = defineMethod({
  id: 'sampo',
  name: 'SAMPO',
  paper: '2602.21534',
  idea: 'Sequence clipping + GiGPO step advantages over anchor states + dynamic filtering.',
  stage: 'ratio',
  estimator: true,
  conflicts: ['gspo', 'gmpo', 'seeupo', 'dapo', 'dars', 'drgrpo', 'edge', 'prorl'],
  params: {
    clipLow: { kind: 'number', default: 3e-3, min: 0, max: 1, scale: 'log', label: 'clip low', doc: 'Sequence-ratio floor 1 - clipLow.' },
    clipHigh: { kind: 'number', default: 4e-3, min: 0, max: 10, scale: 'log', label: 'clip high', doc: 'Sequence-ratio ceiling 1 + clipHigh.' },
    stepWeight: { kind: 'number', default: 1, min: 0, max: 10, label: 'step weight omega', doc: 'Weight of the anchor-state step advantage.' },
    gamma: { kind: 'number', default: 0.95, min: 0, max: 1, label: 'gamma', doc: 'Discount of the step returns.' },
    filter: { kind: 'bool', default: true, label: 'dynamic filtering', doc: 'Drop all-equal groups and refill the batch.' },
    coldStart: { kind: 'int', default: 5, min: 0, max: 1000, label: 'cold-start iterations', doc: 'Iterations before filtering starts.' },
    maxGenBatches: { kind: 'int', default: 3, min: 1, max: 10, label: 'max generation batches', doc: 'Rollout rounds per iteration when filtering.' },
    klCoef: { kind: 'number', default: 0.01, min: 0, max: 1, label: 'KL coef', doc: 'beta of the k3 (low_var_kl) KL to the reference in the loss (replaces the global KL coef).' },
  },
  plan(plan, p) {
    plan.ratio = { mode: 'step', clipLow: p.clipLow, clipHigh: p.clipHigh };
    plan.lossAgg = 'seq-mean-token-mean';
    plan.stepRows = true;
    plan.kl = { coef: p.klCoef, type: 'k3' };
    Object.assign(plan.advantage, { estimator: 'gigpo', scaleStd: false, stepWeight: p.stepWeight, gamma: p.gamma });
    plan.anchors = true;
    if (p.filter) plan.dynamicSampling = { maxGenBatches: p.maxGenBatches, from: p.coldStart + 1 };
  },
  frameworks: {
    verl: () => ({
      set: [{ key: 'actor_rollout_ref.actor.policy_loss.loss_mode', value: 'gspo', from: [] }],
      matches: [carried('clipLow', 'clip_ratio_low'), carried('clipHigh', 'clip_ratio_high'), carried('klCoef', 'kl_loss_coef')],
      unsupported: [
        { param: 'stepWeight', reason: "GiGPO's step advantages need the ARL-Arena reference code (a verl fork, adv_estimator=gigpo)" },
        { param: 'gamma', reason: "GiGPO's step returns need the ARL-Arena reference code" },
        { param: 'filter', reason: "dynamic filtering is the reference code's filter_groups, not verl's core trainer" },
        { param: 'coldStart', reason: "the reference code's cold_start_steps" },
        { param: 'maxGenBatches', reason: "the reference code's max_num_gen_batches" },
      ],
    }),
    trl: () => ({
      set: [{ key: 'importance_sampling_level', value: 'sequence', from: [] }],
      matches: [carried('klCoef', 'beta')],
      unsupported: [
        { param: 'clipLow', reason: "SAMPO clips each step's ratio; TRL's sequence epsilon clips whole completions" },
        { param: 'clipHigh', reason: "SAMPO clips each step's ratio; TRL's sequence epsilon clips whole completions" },
        { param: 'stepWeight', reason: 'TRL has no step-level (anchor state) advantages' },
        { param: 'gamma', reason: 'TRL has no step-level returns' },
        { param: 'filter', reason: 'TRL does not refill the batch with new prompts' },
        { param: 'coldStart', reason: 'TRL does not refill the batch with new prompts' },
        { param: 'maxGenBatches', reason: 'TRL does not refill the batch with new prompts' },
      ],
    }),
  },
  remedies: { collapse: 'SAMPO / dynamic sampling (filter)' },
  labNote: 'SAMPO would replace the all-equal groups (weight 0 here) with freshly sampled ones.',
  sweep: { toy: 'epochs', methods: 'sampo', metric: 'gradNormMax', dir: -1, claim: 'sequence clipping + filtering: no gradient spikes', also: ['allEqual', 'success'], outcome: { toy: 'epochs', dir: 1, claim: 'steadier off-policy updates learn faster' } },
});
