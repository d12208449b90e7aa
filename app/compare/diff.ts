/**
 * What run B changes against run A, as flat config keys (`lr`, `grpo.eps`, `methods`): the legend
 * names it, and B's changes are carried onto a new A when A is taken again from the playground.
 */
import { allFields, fieldSpec, getField, methodRegistry, withField, withMethods, type RunConfig } from '../../workers/meta';
import type { ParamValue } from '../../workers/core/methods/params';

export interface ConfigChange {
  key: string;
  a: string;
  b: string;
}

/** The seed is shared by both runs, never a difference. */
const SHARED = new Set(['seed']);

function show(v: ParamValue | undefined): string {
  if (typeof v === 'number') return String(Number(v.toPrecision(6)));
  return String(v);
}

function methodsText(cfg: RunConfig): string {
  return cfg.methods.join('+');
}

/** A method set by its cards' names: `GRPO + EDGE-GRPO`. */
export function methodNames(ids: readonly string[]): string {
  return ids.map((id) => (Object.hasOwn(methodRegistry, id) ? (methodRegistry as Record<string, { name: string }>)[id]!.name : id)).join(' + ');
}

/** A setting in words (its field's label), the key where it has none. */
export function fieldLabel(key: string): string {
  return fieldSpec(key)?.label ?? key;
}

/** A change as a legend or a message says it: the methods by name, a setting by its label (`learning rate 0.01`). */
export function changeText(c: ConfigChange, side: 'a' | 'b'): string {
  const v = side === 'a' ? c.a : c.b;
  if (c.key === 'methods') return methodNames(v.split('+'));
  return `${fieldLabel(c.key)} ${v}`;
}

/** B's differences from A; parameters of a method that neither run has on are left out. */
export function configDiff(a: RunConfig, b: RunConfig): ConfigChange[] {
  const out: ConfigChange[] = [];
  if (methodsText(a) !== methodsText(b)) out.push({ key: 'methods', a: methodsText(a), b: methodsText(b) });
  const active = new Set<string>([...a.methods, ...b.methods]);
  for (const [key] of allFields()) {
    if (SHARED.has(key)) continue;
    const dot = key.indexOf('.');
    const owner = dot > 0 ? key.slice(0, dot) : '';
    if (owner && owner !== 'env' && owner !== 'model' && !active.has(owner)) continue;
    const va = getField(a, key);
    const vb = getField(b, key);
    if (va !== vb) out.push({ key, a: show(va), b: show(vb) });
  }
  return out;
}

/** One side's legend text: `B: GRPO + EDGE-GRPO, learning rate 0.01` (at most `max` changes, then "+N more"). */
export function legendText(side: 'A' | 'B', changes: ConfigChange[], max = 3): string {
  if (changes.length === 0) return `${side}: same settings`;
  const parts = changes.slice(0, max).map((c) => changeText(c, side === 'A' ? 'a' : 'b'));
  const more = changes.length > max ? ` +${changes.length - max} more` : '';
  return `${side}: ${parts.join(', ')}${more}`;
}

/**
 * `base` with B's changes (against `oldA`) applied again; a change the new base refuses is
 * skipped and named in `skipped`.
 */
export function carryChanges(oldA: RunConfig, b: RunConfig, base: RunConfig): { config: RunConfig; skipped: string[] } {
  let config = base;
  const skipped: string[] = [];
  for (const c of configDiff(oldA, b)) {
    try {
      config = c.key === 'methods' ? withMethods(config, b.methods) : withField(config, c.key, getField(b, c.key)!);
    } catch (e) {
      skipped.push(e instanceof Error ? e.message : String(e));
    }
  }
  return { config, skipped };
}
