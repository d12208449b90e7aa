/**
 * SeeUPO: Sequence-level Sequential Update Policy Optimization (arXiv 2602.06554), docs/METHODS.md 5.8.
 *
 * A K-turn episode is K sequentially acting agents. The update goes one turn at a time in REVERSE
 * order (turn K first): turn k's tokens are trained with their per-turn sequence ratio
 * u_k = exp(mean over turn k of logp - logp_old) and the advantage M = A * prod_{j>k} u_j of the
 * already-updated later turns (stop-gradient), clipped like PPO; then turn k is frozen and k-1 is
 * next. Each epoch is K such stages of optimizer steps.
 */
import { defineMethod } from './registry';

export const seeupo = defineMethod({
  id: 'seeupo',
  name: 'SeeUPO',
  paper: '2602.06554',
  idea: 'Update one turn at a time in reverse order, with per-turn sequence ratios.',
  stage: 'ratio',
  conflicts: ['gspo', 'gmpo', 'sampo', 'dapo', 'drgrpo', 'vcpo'],
  inferred: 'The update rule was not published in reach: this is the HAPPO-style sequential reading of docs/METHODS.md 5.8.',
  params: {
    clip: { kind: 'number', default: 0.2, min: 0, max: 1, label: 'clip', doc: 'Per-turn ratio clip 1 +- clip.' },
  },
  plan(plan, p) {
    plan.ratio = { mode: 'turn', clipLow: p.clip, clipHigh: p.clip };
  },
  frameworks: { verl: null, trl: null, noEquivalent: 'turn-by-turn reverse-order updates are not an option of either framework' },
  sweep: { toy: 'epochs', methods: 'grpo,seeupo', metric: 'success', dir: 1, claim: 'reverse-order per-turn updates: steadier improvement', also: ['ratioMax'], outcome: { toy: 'epochs', dir: 1, claim: 'steadier off-policy updates learn faster' } },
});
