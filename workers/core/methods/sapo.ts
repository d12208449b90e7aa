/**
 * SAPO: Soft Adaptive Policy Optimization (arXiv 2511.20347), docs/METHODS.md 5.16.
 *
 * No hard clip: each token's objective is f(r) A with the soft gate f(r) = sigmoid(tau (r - 1)) 4 / tau,
 * tau = tau_pos (1.0) for A > 0 and tau_neg (1.05) otherwise, so the gradient -4 A s (1 - s) r fades
 * smoothly as r leaves 1 instead of switching off. Aggregated seq-mean-token-mean. ARLArena counts
 * it among the tolerant clips. As verl's `compute_policy_loss_sapo` (loss_mode sapo).
 */
import { defineMethod } from './registry';

export const sapo = defineMethod({
  id: 'sapo',
  name: 'SAPO',
  paper: '2511.20347',
  idea: 'A soft, sign-dependent gate on the importance ratio instead of a hard clip (a tolerant clip).',
  stage: 'ratio',
  conflicts: ['gspo', 'gmpo', 'seeupo', 'sampo', 'dapo', 'vcpo', 'drgrpo', 'cispo'],
  params: {
    tauPos: { kind: 'number', default: 1, min: 0.01, max: 100, label: 'tau (A > 0)', doc: 'Temperature of the gate for positive advantages.' },
    tauNeg: { kind: 'number', default: 1.05, min: 0.01, max: 100, label: 'tau (A < 0)', doc: 'Temperature of the gate for negative advantages.' },
  },
  plan(plan, p) {
    plan.ratio = { mode: 'sapo', tauPos: p.tauPos, tauNeg: p.tauNeg };
    plan.lossAgg = 'seq-mean-token-mean';
  },
  frameworks: {
    verl: () => ({
      set: [{ key: 'actor_rollout_ref.actor.policy_loss.loss_mode', value: 'sapo', from: [] }],
      unsupported: [
        { param: 'tauPos', reason: "set the actor's tau_pos by hand (not exported)" },
        { param: 'tauNeg', reason: "set the actor's tau_neg by hand (not exported)" },
      ],
    }),
    trl: null,
    noEquivalent: "TRL's GRPOConfig has no soft gate",
  },
  sweep: { toy: 'epochs', methods: 'grpo,sapo', metric: 'gradNormMax', dir: 1, claim: 'a soft gate: no token loses its gradient at a clip edge', also: ['ratioMax', 'success'], outcome: { toy: 'epochs', dir: 1, claim: 'tolerant clipping gains fast early' } },
});
