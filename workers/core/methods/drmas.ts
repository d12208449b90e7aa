/**
 * Dr. MAS: agent-wise advantage normalization (arXiv 2602.08847), docs/METHODS.md 5.14, langfengQ/DrMAS.
 *
 * Several agents share one episode's outcome but have different reward distributions; one global
 * mean and std per group mismatch them. Dr. MAS groups by (prompt, agent role): each role's reward
 * is normalized with that role's own mean and std within the group, and broadcast to that role's
 * turns. Works with the GRPO, Dr. GRPO and RLOO estimators.
 */
import { defineMethod } from './registry';

export const drmas = defineMethod({
  id: 'drmas',
  name: 'Dr. MAS',
  paper: '2602.08847',
  idea: 'Normalize advantages per agent role within each group, not with one global baseline.',
  stage: 'advantage',
  tasks: ['roles'],
  conflicts: ['reinforcepp', 'igpo', 'cm2', 'otb', 'vcpo', 'sampo'],
  params: {},
  plan(plan) {
    plan.advantage.byRole = true;
  },
  frameworks: { verl: null, trl: null, noEquivalent: 'per-agent normalization needs the Dr. MAS reference code (a verl fork, algorithm.group_by_agent_id)' },
  sweep: { toy: 'roles', methods: 'grpo,drmas', metric: 'success', dir: 1, claim: 'per-role normalization: both agents learn', also: ['gradNormMax'], outcome: { toy: 'roles', dir: 1, claim: 'both agents learn' } },
});
