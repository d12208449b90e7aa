/**
 * GMPO: Geometric-Mean Policy Optimization (arXiv 2507.20673), METHODS.md 5.12.
 *
 * Maximizes the geometric mean of the token-level importance-weighted rewards: per token the
 * log-ratio is clipped in log space to [-0.4, +0.4], one-sided by the sign of A (min for A > 0,
 * max for A < 0), then s_i = exp(mean_t clipped log-ratio) and the loss is mean_i(-s_i A_i). Outlier
 * ratios move the geometric mean little, which permits the wide clip range.
 */
import type { MethodDef } from './registry';

export const gmpo = {
  id: 'gmpo',
  name: 'GMPO',
  paper: '2507.20673',
  idea: 'Geometric mean of token ratios, with a sign-aware log-space clip of +-0.4.',
  stage: 'ratio',
  conflicts: ['gspo', 'seeupo', 'sampo', 'dapo', 'drgrpo'],
  params: {
    clip: { kind: 'number', default: 0.4, min: 0.01, max: 5, label: 'log-space clip', doc: 'Per-token log-ratio clip range [-clip, +clip] (GMPO: 0.4).' },
  },
} as const satisfies MethodDef;
