/**
 * The rollout-correction entries (docs/METHODS.md 5.19), in the order their hooks run and their
 * place in methodRegistry (methods/index.ts). Their stage (workers/core/update/correctionStages.ts)
 * applies plan.rolloutCorrection on both backends.
 */
import { geors } from './geors';
import { seqis } from './seqis';
import { seqrs } from './seqrs';
import { tis } from './tis';
import { tokenrs } from './tokenrs';
import { veto } from './veto';

export const ROLLOUT_CORRECTION_METHODS = { tis, seqis, tokenrs, seqrs, geors, veto } as const;
