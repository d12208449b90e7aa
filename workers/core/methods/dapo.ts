/**
 * DAPO: Decoupled clip and Dynamic sAmpling Policy Optimization (arXiv 2503.14476), docs/METHODS.md 4.4.
 *
 * 1. Clip-higher: a larger upper clip (1 + 0.28) lets low-probability tokens grow, keeping entropy up.
 * 2. Token-level loss (token-mean).
 * 3. Dynamic sampling: groups whose rewards are all equal carry no gradient; they are dropped and
 *    more prompts are rolled out until the batch is full (at most `maxGenBatches` generation
 *    batches; if still short, the last generation's groups fill it). The trained batch then has no
 *    collapsed group by construction; the `rollouts` metric shows the extra generation cost.
 * Overlong shaping does not apply: the toys have a hard turn limit and no length penalty.
 */
import { defineMethod } from './registry';
import { carried } from './frameworkHelpers';

export const dapo = defineMethod({
  id: 'dapo',
  name: 'DAPO',
  paper: '2503.14476',
  idea: 'Clip-higher, token-mean loss, and dynamic sampling that refills the batch with groups that still have a signal.',
  stage: 'filtering',
  conflicts: ['gspo', 'gmpo', 'sampo', 'dars', 'vcpo', 'seeupo'],
  params: {
    clipLow: { kind: 'number', default: 0.2, min: 0, max: 1, label: 'clip low', doc: 'Ratio floor 1 - clipLow.' },
    clipHigh: { kind: 'number', default: 0.28, min: 0, max: 10, label: 'clip high', doc: 'Ratio ceiling 1 + clipHigh (clip-higher).' },
    dynamicSampling: { kind: 'bool', default: true, label: 'dynamic sampling', doc: 'Drop all-equal groups and refill the batch with new prompts.' },
    maxGenBatches: { kind: 'int', default: 3, min: 1, max: 10, label: 'max generation batches', doc: 'Rollout rounds per iteration before giving up on refilling.' },
  },
  plan(plan, p) {
    // Clip-higher on the token ratio (DAPO conflicts with every other ratio mode); the dual clip stays.
    if (plan.ratio.mode === 'token') plan.ratio = { ...plan.ratio, clipLow: p.clipLow, clipHigh: p.clipHigh };
    plan.lossAgg = 'token-mean';
    if (p.dynamicSampling) plan.dynamicSampling = { maxGenBatches: p.maxGenBatches, from: 1 };
  },
  frameworks: {
    verl: () => ({
      set: [],
      matches: [carried('clipLow', 'clip_ratio_low'), carried('clipHigh', 'clip_ratio_high')],
      unsupported: [
        { param: 'dynamicSampling', reason: "dynamic sampling is verl's DAPO recipe (algorithm.filter_groups in recipe/dapo), not the core trainer" },
        { param: 'maxGenBatches', reason: "the DAPO recipe's max_num_gen_batches" },
      ],
    }),
    trl: () => ({
      set: [],
      matches: [carried('clipLow', 'epsilon'), carried('clipHigh', 'epsilon_high')],
      unsupported: [
        { param: 'dynamicSampling', reason: 'TRL does not refill the batch with new prompts' },
        { param: 'maxGenBatches', reason: 'TRL does not refill the batch with new prompts' },
      ],
    }),
  },
  remedies: { entropy: 'DAPO clip-higher' },
  labNote: 'DAPO would replace the all-equal groups (weight 0 here) with freshly sampled ones.',
  sweep: { toy: 'hard', methods: 'grpo,dapo', metric: 'allEqual', dir: -1, claim: 'dynamic sampling: no collapsed group in the trained batch; clip-higher keeps entropy up', also: ['rollouts', 'entropyEnd', 'success'], outcome: { toy: 'hardPre', dir: 1, claim: 'lifts success on hard prompts from a competent start' } },
});
