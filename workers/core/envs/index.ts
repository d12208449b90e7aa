/** The task registry: one file per toy task (docs/TASKS.md has the table of what each one shows). */
import type { ConfigKey, RunConfig, TaskId } from '../config';
import { createRolesEnv } from './roles';
import { createSearchEnv } from './search';
import { createSequenceEnv } from './sequence';
import { createToolsEnv } from './tools';
import type { TaskEnv } from './types';

export function createEnv(cfg: RunConfig): TaskEnv {
  switch (cfg.task) {
    case 'search':
      return createSearchEnv(cfg.env);
    case 'tools':
      return createToolsEnv(cfg.env);
    case 'roles':
      return createRolesEnv(cfg.env);
    case 'sequence':
      return createSequenceEnv({ ...cfg.env, seed: cfg.seed });
  }
}

/** The noisy reward-model channel's knobs, read by every task. */
const RM_KNOBS = ['env.rmNoise', 'env.rmNoiseFloor', 'env.rmUnsure'] as const;

/** The `env.*` knobs each task reads (for a task panel that shows only the selected task's knobs). */
export const TASK_KNOBS = {
  search: ['env.entities', 'env.attributes', 'env.values', 'env.maxTurns', 'env.hops', 'env.noise', 'env.noiseSchedule', 'env.noiseStart', 'env.noiseBase', 'env.noiseIters', 'env.formatPenalty', ...RM_KNOBS, 'env.rmUnsureOn'],
  tools: ['env.toolSteps', 'env.toolValues', 'env.distractors', 'env.judgeNoise', 'env.strictArgs', 'env.toolReward', ...RM_KNOBS],
  roles: ['env.entities', 'env.attributes', 'env.values', 'env.roleScale', 'env.roleOffset', ...RM_KNOBS],
  sequence: ['env.symbols', 'env.seqLen', 'env.targets', 'env.seqReward', 'env.think', ...RM_KNOBS],
} as const satisfies Record<TaskId, readonly ConfigKey[]>;

export * from './types';
