/**
 * The tasks' settings as data: the values a few knobs take and which `env.*` knobs each task reads.
 * Descriptions only, no simulator: the config schema and the page read them without loading a task.
 */
import type { ConfigKey, TaskId } from '../config';

/** search: fixed noise, or ZeroSearch's exponential curriculum. */
export const NOISE_SCHEDULES = ['fixed', 'exp'] as const;
export type NoiseSchedule = (typeof NOISE_SCHEDULES)[number];
/** sequence: exact match only, or partial credit (the fraction of positions right). */
export const SEQ_REWARDS = ['exact', 'partial'] as const;
export type SeqReward = (typeof SEQ_REWARDS)[number];
/** tools: the checklist's partial credit, or the outcome alone. */
export const TOOL_REWARDS = ['checklist', 'outcome'] as const;
export type ToolReward = (typeof TOOL_REWARDS)[number];

/** Which rollouts an unsure reward model may be unsure of (`env.rmUnsureOn`). */
export const RM_UNSURE_ON = ['any', 'unread'] as const;
export type RmUnsureOn = (typeof RM_UNSURE_ON)[number];

/** The noisy reward-model channel's knobs, read by every task. */
const RM_KNOBS = ['env.rmNoise', 'env.rmNoiseFloor', 'env.rmUnsure'] as const;

/** The `env.*` knobs each task reads (for a task panel that shows only the selected task's knobs). */
export const TASK_KNOBS = {
  search: ['env.entities', 'env.attributes', 'env.values', 'env.maxTurns', 'env.hops', 'env.noise', 'env.noiseSchedule', 'env.noiseStart', 'env.noiseBase', 'env.noiseIters', 'env.formatPenalty', ...RM_KNOBS, 'env.rmUnsureOn'],
  tools: ['env.toolSteps', 'env.toolValues', 'env.distractors', 'env.judgeNoise', 'env.strictArgs', 'env.toolReward', ...RM_KNOBS],
  roles: ['env.entities', 'env.attributes', 'env.values', 'env.roleScale', 'env.roleOffset', ...RM_KNOBS],
  sequence: ['env.symbols', 'env.seqLen', 'env.targets', 'env.seqReward', 'env.think', ...RM_KNOBS],
} as const satisfies Record<TaskId, readonly ConfigKey[]>;
