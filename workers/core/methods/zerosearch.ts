/**
 * ZeroSearch (arXiv 2505.04588), docs/METHODS.md 5.6.
 *
 * The search engine is simulated, and the probability that it returns a noisy document rises with
 * an exponential curriculum p_i = p_s + (b^(i/m) - 1)/(b - 1) (p_e - p_s), so the policy learns to
 * search while the engine is kind and to cross-check later. Switching it on sets the search task's
 * noise curriculum from these parameters (env.noise* otherwise).
 */
import { defineMethod } from './registry';

export const zerosearch = defineMethod({
  id: 'zerosearch',
  name: 'ZeroSearch',
  paper: '2505.04588',
  idea: 'A simulated search engine whose noise rises on an exponential curriculum.',
  stage: 'environment',
  tasks: ['search'],
  conflicts: [],
  params: {
    pStart: { kind: 'number', default: 0, min: 0, max: 1, label: 'noise start p_s', doc: 'Noise probability at the first iteration.' },
    pEnd: { kind: 'number', default: 0.5, min: 0, max: 1, label: 'noise end p_e', doc: 'Noise probability at the end of the curriculum.' },
    base: { kind: 'number', default: 4, min: 1, max: 100, label: 'base b', doc: 'Curriculum base (ZeroSearch: 4; 1 is linear).' },
    iters: { kind: 'int', default: 200, min: 1, max: 1_000_000, label: 'curriculum iterations m', doc: 'Iterations until the noise reaches p_e.' },
  },
  plan(plan, p) {
    plan.envConfig = {
      ...plan.envConfig,
      env: { ...plan.envConfig.env, noiseSchedule: 'exp', noiseStart: p.pStart, noise: p.pEnd, noiseBase: p.base, noiseIters: p.iters },
    };
  },
  frameworks: { verl: null, trl: null, noEquivalent: 'the noise curriculum lives in the simulated search engine (the ZeroSearch reference code), not in the trainer' },
  labNote: 'ZeroSearch changes the search engine\'s noise during rollouts: the frozen batch cannot show it.',
  sweep: { toy: 'noisySearch', methods: 'grpo,zerosearch', set: { 'zerosearch.iters': '150' }, metric: 'success', dir: 1, claim: 'noise curriculum vs fixed 50% noise: faster learning', also: ['tokens'], outcome: { toy: 'noisySearch', dir: 1, claim: 'the curriculum beats fixed noise' } },
});
