/**
 * The rollout-correction entries (docs/METHODS.md 5.19), in the order their hooks run. They join
 * methodRegistry (methods/index.ts) together with the update stage that applies
 * plan.rolloutCorrection on both backends and the run settings of the sampler; until then no run
 * can switch them on, so none appears where it would do nothing.
 */
import { geors } from './geors';
import { seqis } from './seqis';
import { seqrs } from './seqrs';
import { tis } from './tis';
import { tokenrs } from './tokenrs';
import { veto } from './veto';

export const ROLLOUT_CORRECTION_METHODS = { tis, seqis, tokenrs, seqrs, geors, veto } as const;
