/**
 * DARS: Difficulty-Adaptive Rollout Sampling (arXiv 2508.13755), docs/METHODS.md 5.7,
 * yangzhch6/DARS `schedule_ET`, `schedule_HW`.
 *
 * GRPO's advantage mass per prompt, N S(a), peaks at accuracy 1/2, so hard prompts weigh little.
 * After the first G rollouts, a prompt with accuracy a < 0.5 (a = 0 counts as 0.5/N) gets dN more:
 * equal treatment dN = ceil((A* - N S(a)) / S(a)), hardness-weighted dN = ceil((2(1-a) A* - N S(a)) /
 * S(a)), with S(a) = 2a(1-a), A* = N/2 without std (2 sqrt(a(1-a)), A* = N with it), capped at
 * nMax - N. The extra rollouts join the prompt's group; then prompts whose combined accuracy is 0 or
 * >= upper are dropped. The advantage is GRPO's over the enlarged group, without std by default.
 */
import { defineMethod } from './registry';

export const dars = defineMethod({
  id: 'dars',
  name: 'DARS',
  paper: '2508.13755',
  idea: 'More rollouts for hard prompts (accuracy below 1/2), so their advantage mass matches easy ones.',
  stage: 'sampling',
  conflicts: ['dapo', 'sampo', 'edge', 'regft'],
  params: {
    schedule: { kind: 'choice', default: 'ET', options: ['ET', 'HW'], label: 'schedule', doc: 'Equal treatment or hardness-weighted extra rollouts.' },
    nMax: { kind: 'int', default: 32, min: 2, max: 128, label: 'max rollouts per prompt', doc: 'N_max: the first stage plus the extra rollouts of a prompt.' },
    useStd: { kind: 'bool', default: false, label: 'divide by std', doc: 'Use the std-normalized schedule and advantage (DARS default: off).' },
    upper: { kind: 'number', default: 1, min: 0, max: 1, label: 'upper drop threshold', doc: 'Drop prompts whose combined accuracy is at least this.' },
  },
  plan(plan, p, cfg) {
    plan.extraRollouts = { schedule: p.schedule, nMax: Math.max(p.nMax, cfg.group), useStd: p.useStd, upper: p.upper };
    plan.advantage.scaleStd = p.useStd;
  },
  frameworks: { verl: null, trl: null, noEquivalent: 'extra rollouts for hard prompts need the DARS reference code (a verl fork)' },
  remedies: { collapse: 'DARS (resample hard prompts)' },
  labNote: 'DARS acts while sampling (extra rollouts for hard prompts): the frozen batch cannot show it.',
  sweep: { toy: 'hard', methods: 'grpo,dars', set: { 'dars.nMax': '24' }, metric: 'success', dir: 1, claim: 'extra rollouts for hard prompts find more successes', also: ['rollouts', 'allEqual'], outcome: { toy: 'hardPre', dir: 1, claim: 'lifts success on hard prompts from a competent start' } },
});
