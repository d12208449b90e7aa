/**
 * PPO-clip with a value head (Schulman et al. 2017, arXiv 1707.06347), METHODS.md 4.1, verl
 * `compute_gae_advantage_return`.
 *
 * A learned value V(s) is the baseline: GAE advantages A_t = sum_l (gamma lambda)^l delta_{t+l},
 * delta_t = r_t + gamma V(s_{t+1}) - V(s_t), with the outcome reward on the last policy token,
 * whitened over the batch, into the clipped surrogate. The toy's critic is what METHODS.md suggests,
 * "an extra table V[s]": one value per state, the state being the tokens the policy sees (hashed
 * into the table); each iteration moves every visited entry `valueLr` of the way to the mean return
 * of the rows that visited it. It needs no group: it works at group size 1, where GRPO has no baseline.
 */
import type { MethodDef } from './registry';

export const ppo = {
  id: 'ppo',
  name: 'PPO (value head)',
  paper: '1707.06347',
  idea: 'A learned value baseline (a critic table over states) with GAE advantages instead of group statistics.',
  stage: 'advantage',
  estimator: true,
  conflicts: [],
  inferred: 'The critic is a table over hashed policy contexts (METHODS.md 4.1 toy), updated by a step toward the mean return, not a network head trained by SGD.',
  params: {
    gamma: { kind: 'number', default: 1, min: 0, max: 1, label: 'gamma', doc: 'Discount of the GAE (verl: 1).' },
    lambda: { kind: 'number', default: 1, min: 0, max: 1, label: 'lambda', doc: 'GAE lambda (verl: 1; 0 is one-step TD).' },
    valueLr: { kind: 'number', default: 0.1, min: 0.001, max: 1, scale: 'log', label: 'value step', doc: 'How far each visited critic entry moves toward its mean return per iteration.' },
  },
} as const satisfies MethodDef;
