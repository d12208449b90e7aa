/**
 * ARLArena / SAMPO (arXiv 2602.21534), METHODS.md 5.9, WillDreamer/ARL-Arena.
 *
 * SAMPO = GSPO's sequence-level clip (3e-3 / 4e-3) with seq-mean-token-mean, GiGPO advantages
 * (episode advantage R - mean plus omega times a step advantage: the discounted step return minus
 * its mean over the steps, across the group, that start from the same observation -- anchor states),
 * and dynamic filtering of all-equal groups after `coldStart` iterations.
 */
import type { MethodDef } from './registry';

export const sampo = {
  id: 'sampo',
  name: 'SAMPO',
  paper: '2602.21534',
  idea: 'Sequence clipping + GiGPO step advantages over anchor states + dynamic filtering.',
  stage: 'ratio',
  estimator: true,
  conflicts: ['gspo', 'gmpo', 'seeupo', 'dapo', 'dars', 'drgrpo', 'edge'],
  params: {
    clipLow: { kind: 'number', default: 3e-3, min: 0, max: 1, scale: 'log', label: 'clip low', doc: 'Sequence-ratio floor 1 - clipLow.' },
    clipHigh: { kind: 'number', default: 4e-3, min: 0, max: 10, scale: 'log', label: 'clip high', doc: 'Sequence-ratio ceiling 1 + clipHigh.' },
    stepWeight: { kind: 'number', default: 1, min: 0, max: 10, label: 'step weight omega', doc: 'Weight of the anchor-state step advantage.' },
    gamma: { kind: 'number', default: 0.95, min: 0, max: 1, label: 'gamma', doc: 'Discount of the step returns.' },
    filter: { kind: 'bool', default: true, label: 'dynamic filtering', doc: 'Drop all-equal groups and refill the batch.' },
    coldStart: { kind: 'int', default: 5, min: 0, max: 1000, label: 'cold-start iterations', doc: 'Iterations before filtering starts.' },
    maxGenBatches: { kind: 'int', default: 3, min: 1, max: 10, label: 'max generation batches', doc: 'Rollout rounds per iteration when filtering.' },
  },
} as const satisfies MethodDef;
