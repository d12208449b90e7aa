/**
 * EDGE-GRPO: Entropy-Driven advantage and Guided Error correction (arXiv 2507.21848), docs/METHODS.md 5.3.
 *
 * EDA: each rollout's advantage is scaled by Pbar / P_i, its mean token entropy relative to the
 * group's (old policy, detached): confident correct answers gain more, confident wrong ones lose
 * more, and equal-reward groups stay at zero. The factor is not clamped: the reference code's
 * clamp to [0.1, 10] is commented out (ZhangXJ199/EDGE-GRPO@cbe13ca trl_edge/trainer/
 * grpo_aha_trainer.py:1229-1232); `clamp` switches that variant on.
 * GEC: a wrong rollout (not the task's best reward) is, with probability `inject`, replayed up to
 * its last turn and then finished by the task's reference solution (the "correct answer is ..."
 * injection), or with probability `replace` replaced by the reference trajectory. The code's third
 * branch (continue after "Wait! Something is wrong") has no counterpart in the toys; those rollouts
 * stay as they were. Injected tokens are off-policy: learning is fast and possibly biased.
 */
import { defineMethod } from './registry';

export const edge = defineMethod({
  id: 'edge',
  name: 'EDGE-GRPO',
  paper: '2507.21848',
  idea: 'Entropy-scaled advantages plus guided error correction that puts correct answers into failing groups.',
  stage: 'advantage',
  // PPO's GAE and OTB's token baseline are not group advantages: the entropy factor would be dropped.
  conflicts: ['otb', 'ppo', 'reinforcepp', 'igpo', 'cm2', 'sampo', 'dars', 'dapo', 'regft'],
  inferred: 'GEC\'s reflection branch has no toy counterpart; the entropy is the old policy\'s, detached (the code lets gradient flow through it).',
  params: {
    eda: { kind: 'bool', default: true, label: 'entropy-driven advantage', doc: 'Scale each rollout\'s advantage by the group mean entropy over its own.' },
    clamp: { kind: 'bool', default: false, label: 'clamp the factor', doc: 'Clamp the entropy factor to [0.1, 10] (a variant the reference code leaves commented out; departs from it).' },
    gec: { kind: 'bool', default: true, label: 'guided error correction', doc: 'Correct some wrong rollouts with the reference solution.' },
    inject: { kind: 'number', default: 0.25, min: 0, max: 1, label: 'inject probability', doc: 'A wrong rollout gets the reference answer at its last turn.' },
    replace: { kind: 'number', default: 0.25, min: 0, max: 1, label: 'replace probability', doc: 'A wrong rollout is replaced by the reference trajectory.' },
  },
  plan(plan, p) {
    plan.advantage.entropyScale = p.eda;
    plan.advantage.entropyClamp = p.clamp;
    if (p.gec) plan.errorCorrection = { inject: p.inject, replace: p.replace };
  },
  frameworks: { verl: null, trl: null, noEquivalent: 'entropy-scaled advantages and error correction need the EDGE-GRPO reference code (a TRL fork)' },
  remedies: { collapse: 'EDGE-GRPO', entropy: 'EDGE-GRPO (entropy-driven advantage)' },
  labNote: 'EDGE-GRPO\'s error correction acts while sampling; only its entropy-scaled advantage shows here.',
  sweep: { toy: 'hard', methods: 'grpo,edge', metric: 'success', dir: 1, claim: 'guided error correction puts successes into failing groups', also: ['allEqual'], outcome: { toy: 'hardPre', dir: 1, claim: 'lifts success on hard prompts from a competent start' } },
});
