/**
 * Dynamic filtering on its own (DAPO's dynamic sampling, arXiv 2503.14476; ARLArena's filtering
 * dimension), docs/METHODS.md 5.18. DAPO bundles it with clip-higher and token-mean, SAMPO with
 * sequence clipping and GiGPO, and CISPO conflicts with DAPO's clip; this entry is the filter alone,
 * so the arena can vary filtering against any clip, advantage and aggregation.
 *
 * Groups whose rewards are all equal carry no gradient: they are dropped and more prompts are rolled
 * out until the batch is full (at most `maxGenBatches` generation rounds; if still short, the last
 * round's groups fill it), from iteration coldStart + 1 (workers/core/collect.ts, the same code DAPO and
 * SAMPO use). As the DAPO recipe's filter_groups (verl recipe/dapo, max_num_gen_batches).
 */
import { defineMethod } from './registry';

export const dynfilter = defineMethod({
  id: 'dynfilter',
  name: 'Dynamic filtering',
  paper: '2503.14476',
  idea: 'Drop groups whose rewards are all equal and refill the batch with new prompts, alone (no clip or aggregation change).',
  stage: 'filtering',
  conflicts: ['dapo', 'sampo'],
  params: {
    maxGenBatches: { kind: 'int', default: 3, min: 1, max: 10, label: 'max generation batches', doc: 'Rollout rounds per iteration before giving up on refilling.' },
    coldStart: { kind: 'int', default: 0, min: 0, max: 1000, label: 'cold-start iterations', doc: 'Iterations before filtering starts.' },
  },
  plan(plan, p) {
    plan.dynamicSampling = { maxGenBatches: p.maxGenBatches, from: p.coldStart + 1 };
  },
  frameworks: {
    verl: () => ({
      set: [],
      unsupported: [
        { param: 'maxGenBatches', reason: "dynamic filtering is verl's DAPO recipe (algorithm.filter_groups, max_num_gen_batches in recipe/dapo), not the core trainer" },
        { param: 'coldStart', reason: "the DAPO recipe filters from the first step; ARL-Arena's cold_start_steps" },
      ],
    }),
    trl: null,
    noEquivalent: 'TRL does not refill the batch with new prompts',
  },
  labNote: 'Dynamic filtering would replace the all-equal groups (weight 0 here) with freshly sampled ones.',
  sweep: { toy: 'hard', methods: 'grpo,dynfilter', metric: 'allEqual', dir: -1, claim: 'dynamic filtering: no all-equal group in the trained batch', also: ['rollouts', 'success'], outcome: { toy: 'hardPre', dir: 1, claim: 'lifts success on hard prompts from a competent start' } },
});
