/** The explicit method registry. Adding a method is adding one file and one line here. */
import { grpo } from './grpo';
import type { MethodDef } from './registry';

export const methodRegistry = { grpo } as const satisfies Record<string, MethodDef>;
export type MethodId = keyof typeof methodRegistry;
export const METHOD_IDS = Object.keys(methodRegistry) as MethodId[];
export type { MethodDef, Stage } from './registry';
