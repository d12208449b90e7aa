/**
 * GiGPO: Group-in-Group Policy Optimization (arXiv 2505.10978), docs/METHODS.md 5.17: the step-level
 * advantage estimator on its own, the one SAMPO (sampo.ts) bundles with sequence clipping and
 * filtering, so that ARLArena's advantage dimension can be varied alone.
 *
 * A_{n,t} = A^E_n + omega A^S_{n,t}: the episode part is the group estimator on the outcome over the
 * group's step rows (divided by the std unless `scaleStd` is off), the step part the discounted step
 * return minus its mean over the anchor set, the turns across the group that start from the same
 * observation (kernels/advantage/advantage.ts `gigpo`). As WillDreamer/ARL-Arena@a25a2a2
 * recipe/shop_agent/ppo/core_algos.py:1069, 1103-1111 (`compute_gigpo_outcome_advantage`); the step
 * part is mean-centred only, as there. Unlike SAMPO the loss's sequences stay trajectories: what a
 * sequence is belongs to the aggregation dimension, which the arena varies on its own.
 */
import { defineMethod } from './registry';

export const gigpo = defineMethod({
  id: 'gigpo',
  name: 'GiGPO',
  paper: '2505.10978',
  idea: 'Step-level advantages: rollouts that reach the same state (an anchor) are compared step by step, on top of the episode advantage.',
  stage: 'advantage',
  estimator: true,
  conflicts: [],
  params: {
    stepWeight: { kind: 'number', default: 1, min: 0, max: 10, label: 'step weight omega', doc: 'Weight of the anchor-state step advantage.' },
    gamma: { kind: 'number', default: 0.95, min: 0, max: 1, label: 'gamma', doc: 'Discount of the step returns.' },
    scaleStd: { kind: 'bool', default: true, label: 'divide episode part by std', doc: "Divide the episode advantage by the group std (GiGPO's default; SAMPO's reference does not)." },
  },
  plan(plan, p) {
    Object.assign(plan.advantage, { estimator: 'gigpo', scaleStd: p.scaleStd, stepWeight: p.stepWeight, gamma: p.gamma });
    plan.anchors = true;
  },
  frameworks: {
    verl: null,
    trl: null,
    noEquivalent: "GiGPO is verl-agent's and ARL-Arena's adv_estimator=gigpo (forks of verl), not an option of verl's core trainer or TRL",
  },
  sweep: { toy: 'search', methods: 'gigpo', metric: 'zeroAdv', dir: -1, claim: 'step advantages: steps from the same anchor state still differ where their discounted returns do', also: ['success'], outcome: { toy: 'search', dir: 1, claim: 'finer credit on multi-turn search learns faster' } },
});
