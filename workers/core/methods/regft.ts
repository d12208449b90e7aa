/**
 * ReGFT: Reference-Guided Fine-Tuning (arXiv 2603.01223), docs/METHODS.md 5.4.
 *
 * A pre-RL SFT stage for prompts the policy cannot solve: for the first `iters` iterations, prompts
 * whose group success rate is at most `hardRate` are rolled out again with the first `hintTurns`
 * turns of the task's reference solution forced as a prefix (a hint in the policy's own format);
 * the verifier keeps the correct rollouts, and the policy is fine-tuned on them as its own tokens
 * (SFT: advantage 1 on kept rollouts, conditioned on the prompt alone), together with the correct
 * rollouts it found unaided (ReFT). RL follows.
 */
import { defineMethod } from './registry';

export const regft = defineMethod({
  id: 'regft',
  name: 'ReGFT',
  paper: '2603.01223',
  idea: 'Before RL, fine-tune on correct rollouts that started from a prefix of the reference solution.',
  stage: 'sampling',
  conflicts: ['dars'],
  inferred: 'No formula or settings were published: the hint is a prefix of reference turns, hard means group success <= hardRate, the SFT target is conditioned on the prompt alone.',
  params: {
    iters: { kind: 'int', default: 20, min: 1, max: 1000, label: 'SFT iterations', doc: 'Iterations of the fine-tuning stage before RL starts.' },
    hintTurns: { kind: 'int', default: 1, min: 0, max: 8, label: 'hint turns', doc: 'Reference turns forced as the hint prefix.' },
    hardRate: { kind: 'number', default: 0.125, min: 0, max: 1, label: 'hard prompt rate', doc: 'Prompts with group success at most this get hinted rollouts.' },
  },
  plan(plan, p) {
    plan.hintedSft = { iters: p.iters, hintTurns: p.hintTurns, hardRate: p.hardRate };
  },
  frameworks: { verl: null, trl: null, noEquivalent: 'a fine-tuning stage before RL: run SFT (e.g. TRL SFTTrainer) on the hinted, verified rollouts first' },
  labNote: 'ReGFT acts while sampling (hinted rollouts, then SFT): the frozen batch cannot show it.',
  sweep: { toy: 'hard', methods: 'grpo,regft', metric: 'success', dir: 1, claim: 'SFT on hinted successes lifts the start of RL', also: ['allEqual'], outcome: { toy: 'hardPre', dir: 1, claim: 'lifts success on hard prompts from a competent start' } },
});
