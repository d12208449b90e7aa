/**
 * PPO-clip with a value head (Schulman et al. 2017, arXiv 1707.06347), docs/METHODS.md 4.1, verl
 * `compute_gae_advantage_return`.
 *
 * A learned value V(s) is the baseline: GAE advantages A_t = sum_l (gamma lambda)^l delta_{t+l},
 * delta_t = r_t + gamma V(s_{t+1}) - V(s_t), with the outcome reward on the last policy token,
 * whitened over the batch, into the clipped surrogate. The toy's critic is what docs/METHODS.md suggests,
 * "an extra table V[s]": one value per state, the state being the tokens the policy sees (hashed
 * into the table); each iteration moves every visited entry `valueLr` of the way to the mean return
 * of the rows that visited it. It needs no group: it works at group size 1, where GRPO has no baseline.
 */
import { defineMethod } from './registry';

/** Entries of PPO's critic table (policy contexts are hashed into it). */
export const CRITIC_TABLE_SIZE = 4096;

export const ppo = defineMethod({
  id: 'ppo',
  name: 'PPO (value head)',
  paper: '1707.06347',
  idea: 'A learned value baseline (a critic table over states) with GAE advantages instead of group statistics.',
  stage: 'advantage',
  estimator: true,
  signalOnTies: true,
  conflicts: [],
  inferred: 'The critic is a table over hashed policy contexts (docs/METHODS.md 4.1 toy), updated by a step toward the mean return, not a network head trained by SGD.',
  params: {
    gamma: { kind: 'number', default: 1, min: 0, max: 1, label: 'gamma', doc: 'Discount of the GAE (verl: 1).' },
    lambda: { kind: 'number', default: 1, min: 0, max: 1, label: 'lambda', doc: 'GAE lambda (verl: 1; 0 is one-step TD).' },
    valueLr: { kind: 'number', default: 0.1, min: 0.001, max: 1, scale: 'log', label: 'value step', doc: 'How far each visited critic entry moves toward its mean return per iteration.' },
  },
  plan(plan, p) {
    // GAE over the critic's values, whitened over the batch (verl's masked_whiten).
    plan.whiten = true;
    plan.critic = { size: CRITIC_TABLE_SIZE, gamma: p.gamma, lambda: p.lambda, lr: p.valueLr };
  },
  frameworks: {
    verl: (p) => ({
      set: [{ key: 'algorithm.adv_estimator', value: 'gae', from: [] }],
      matches: [
        ...(p.gamma === 1 ? [{ param: 'gamma', reason: "verl's algorithm.gamma defaults to 1.0" }] : []),
        ...(p.lambda === 1 ? [{ param: 'lambda', reason: "verl's algorithm.lam defaults to 1.0" }] : []),
      ],
      unsupported: [
        ...(p.gamma !== 1 ? [{ param: 'gamma', reason: 'set algorithm.gamma by hand (not exported)' }] : []),
        ...(p.lambda !== 1 ? [{ param: 'lambda', reason: 'set algorithm.lam by hand (not exported)' }] : []),
        { param: 'valueLr', reason: "verl's critic is a network (critic.optim.lr), not the playground's value table" },
      ],
    }),
    trl: null,
    noEquivalent: "TRL's GRPOTrainer has no critic (its PPOTrainer is a separate trainer)",
  },
  sweep: { toy: 'search', methods: 'ppo', metric: 'success', dir: 0, claim: 'a learned (critic) baseline: a reference curve, smoother but lagging while V is poor', also: ['allEqual', 'zeroAdv', 'gradNormStd'], outcome: { toy: 'search', dir: 0, claim: 'a reference curve' } },
});
