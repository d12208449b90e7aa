/** The explicit method registry. Adding a method is adding one file and one line here. */
import { cispo } from './cispo';
import { cm2 } from './cm2';
import { dapo } from './dapo';
import { dars } from './dars';
import { drgrpo } from './drgrpo';
import { drmas } from './drmas';
import { dynfilter } from './dynfilter';
import { edge } from './edge';
import { gigpo } from './gigpo';
import { gmpo } from './gmpo';
import { grpo } from './grpo';
import { gspo } from './gspo';
import { igpo } from './igpo';
import { otb } from './otb';
import { pfppo } from './pfppo';
import { ppo } from './ppo';
import { prorl } from './prorl';
import { regft } from './regft';
import type { MethodDef } from './registry';
import { reinforcepp } from './reinforcepp';
import { ROLLOUT_CORRECTION_METHODS } from './rolloutCorrections';
import { rloo } from './rloo';
import { sampo } from './sampo';
import { sapo } from './sapo';
import { seeupo } from './seeupo';
import { vcpo } from './vcpo';
import { zerosearch } from './zerosearch';

/**
 * Every method by id, in registry order. A method id is a string that names an entry here (isMethodId):
 * the built-in ones, then any that `registerMethod` adds at run time.
 */
export const methodRegistry: Record<string, MethodDef> = {
  grpo, drgrpo, ppo, dapo, gspo, rloo, reinforcepp,
  igpo, cm2, edge, regft, pfppo, zerosearch, dars, seeupo, sampo, vcpo, prorl, gmpo, otb, drmas, cispo, sapo, gigpo, dynfilter,
  ...ROLLOUT_CORRECTION_METHODS,
};
/** Every method id, in registry order (live: `registerMethod` appends). */
export const METHOD_IDS: string[] = Object.keys(methodRegistry);
export const ESTIMATOR_IDS: string[] = METHOD_IDS.filter((id) => methodDef(id).estimator === true);

/** Whether `id` names a registered method (an own key: `toString` or `__proto__` is none). */
export function isMethodId(id: string): boolean {
  return Object.hasOwn(methodRegistry, id);
}

/** The entry of a method id (registered ones included). */
export function methodDef(id: string): MethodDef {
  const def = isMethodId(id) ? methodRegistry[id] : undefined;
  if (!def) throw new Error(`unknown method "${id}"`);
  return def;
}

/**
 * Adds a method at run time: a method defined outside this folder (a test's, or an experiment's)
 * joins the config schema, the share link, the CLI and the UI like the built-in ones.
 */
export function registerMethod(def: MethodDef): void {
  if (!/^[a-z][a-z0-9]*$/.test(def.id)) throw new Error(`method id "${def.id}": expected lowercase letters and digits`);
  if (isMethodId(def.id)) throw new Error(`method "${def.id}" is already registered`);
  if (def.base) throw new Error(`method "${def.id}": only one entry holds the base statistics`);
  methodRegistry[def.id] = def;
  METHOD_IDS.push(def.id);
  if (def.estimator) ESTIMATOR_IDS.push(def.id);
}

/** Every method `id` cannot be active with: its own list, the lists that name it, and (for an estimator) the other estimators. */
export function conflictsOf(id: string): string[] {
  const def = methodDef(id);
  const out = new Set<string>(def.conflicts);
  for (const other of METHOD_IDS) if (methodDef(other).conflicts.includes(id)) out.add(other);
  if (def.estimator) for (const e of ESTIMATOR_IDS) if (e !== id) out.add(e);
  out.delete(id);
  return [...out];
}
export type { MethodDef, Pathology, Stage } from './registry';
export { defineMethod } from './registry';
