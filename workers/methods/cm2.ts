/**
 * CM2: checklist rewards for multi-turn, multi-step tool use (arXiv 2602.12268), METHODS.md 5.2.
 *
 * The reward is the judged checklist: each turn's binary, weighted items (with dependencies and
 * strict items that end the episode) give partial credit, so groups rarely tie. The paper's final
 * recipe assigns it at trajectory level, A = R - mean_G R with F_norm = 1 (no std, after Dr. GRPO);
 * the turn level gives each turn (R_t - mean over the group at that turn) / F_norm. The tools task
 * simulates the judge (with label-flip noise as a knob); this method switches its reward to the
 * checklist (off: success only).
 */
import type { MethodDef } from './registry';

export const cm2 = {
  id: 'cm2',
  name: 'CM2',
  paper: '2602.12268',
  idea: 'Checklist rewards: weighted binary items per turn give partial credit, so groups rarely tie.',
  stage: 'reward',
  estimator: true,
  tasks: ['tools'],
  conflicts: [],
  params: {
    level: { kind: 'choice', default: 'trajectory', options: ['trajectory', 'turn'], label: 'assignment level', doc: 'Trajectory-level reward (the paper\'s final choice) or per-turn advantages.' },
    stdNorm: { kind: 'bool', default: false, label: 'F_norm = std', doc: 'Divide by the group std (off: F_norm = 1, the paper\'s final choice).' },
  },
} as const satisfies MethodDef;
