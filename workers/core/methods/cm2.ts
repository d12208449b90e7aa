/**
 * CM2: checklist rewards for multi-turn, multi-step tool use (arXiv 2602.12268), docs/METHODS.md 5.2.
 *
 * The reward is the judged checklist: each turn's binary, weighted items (with dependencies and
 * strict items that end the episode) give partial credit, so groups rarely tie. The paper's final
 * recipe assigns it at trajectory level, A = R - mean_G R with F_norm = 1 (no std, after Dr. GRPO);
 * the turn level gives each turn (R_t - mean over the group at that turn) / F_norm. The tools task
 * simulates the judge (with label-flip noise as a knob); this method switches its reward to the
 * checklist (off: success only).
 */
import { defineMethod } from './registry';

export const cm2 = defineMethod({
  id: 'cm2',
  name: 'CM2',
  paper: '2602.12268',
  idea: 'Checklist rewards: weighted binary items per turn give partial credit, so groups rarely tie.',
  stage: 'reward',
  estimator: true,
  signalOnTies: true,
  tasks: ['tools'],
  conflicts: [],
  params: {
    level: { kind: 'choice', default: 'trajectory', options: ['trajectory', 'turn'], label: 'assignment level', doc: 'Trajectory-level reward (the paper\'s final choice) or per-turn advantages.' },
    stdNorm: { kind: 'bool', default: false, label: 'F_norm = std', doc: 'Divide by the group std (off: F_norm = 1, the paper\'s final choice).' },
  },
  plan(plan, p) {
    plan.envConfig = { ...plan.envConfig, env: { ...plan.envConfig.env, toolReward: 'checklist' } };
    plan.advantage.scaleStd = p.stdNorm;
    if (p.level === 'turn') {
      plan.advantage.estimator = 'turnGroup';
      plan.taskTurnRewards = true;
    }
  },
  frameworks: {
    // The checklist is a reward function; the trajectory level's advantage is GRPO's without std.
    verl: (p) => ({
      set: [
        { key: 'algorithm.adv_estimator', value: 'grpo', from: [] },
        { key: 'algorithm.norm_adv_by_std_in_grpo', value: p.stdNorm, from: ['cm2.stdNorm'] },
      ],
      matches: p.level === 'trajectory' ? [{ param: 'level', reason: 'trajectory level is a sequence reward: your checklist judge as the custom reward function' }] : [],
      unsupported: p.level === 'turn' ? [{ param: 'level', reason: 'per-turn checklist advantages need the CM2 reference code (a verl fork)' }] : [],
    }),
    trl: (p) => ({
      set: [{ key: 'scale_rewards', value: p.stdNorm ? 'group' : 'none', from: ['cm2.stdNorm'] }],
      matches: p.level === 'trajectory' ? [{ param: 'level', reason: 'trajectory level is a sequence reward: your checklist judge as a reward function' }] : [],
      unsupported: p.level === 'turn' ? [{ param: 'level', reason: 'TRL has no per-turn advantages' }] : [],
    }),
  },
  remedies: { collapse: 'CM2 (checklist rewards)' },
  sweep: { toy: 'tools', methods: 'cm2', metric: 'allEqual', dir: -1, claim: 'checklist partial credit: groups rarely tie', also: ['success'], outcome: { toy: 'tools', dir: 1, claim: 'partial credit lifts outcome success' } },
});
