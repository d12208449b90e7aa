/**
 * Parameter specs: the one description of a tunable value, from which the config schema, the CLI's
 * --help, the share URL and the UI controls are all derived.
 */
import { z } from 'zod';
import { parseNumberText } from '../numberText';

export type ParamSpec =
  | { kind: 'number'; default: number; min: number; max: number; step?: number; scale?: 'log'; doc: string; label: string }
  | { kind: 'int'; default: number; min: number; max: number; doc: string; label: string }
  | { kind: 'bool'; default: boolean; doc: string; label: string }
  | { kind: 'choice'; default: string; options: readonly string[]; doc: string; label: string };

export type ParamValue = number | boolean | string;

/** The value type of one spec: a choice's own options, not any string. */
export type ValueOf<S extends ParamSpec> = S extends { kind: 'bool' }
  ? boolean
  : S extends { kind: 'choice'; options: readonly (infer O extends string)[] }
    ? O
    : number;

/** The values of a record of specs, typed per key (a method's hook reads these without casts). */
export type ParamValues<P extends Readonly<Record<string, ParamSpec>>> = { -readonly [K in keyof P]: ValueOf<P[K]> };

/**
 * Each spec's schema, built once: the page parses values on every render of a method card or a
 * lesson step's link, and building a zod schema costs far more than checking a value with it.
 */
const schemas = new WeakMap<ParamSpec, z.ZodType<ParamValue>>();

/** The zod schema of one value, with a message that says what was expected. */
export function paramSchema(spec: ParamSpec): z.ZodType<ParamValue> {
  let schema = schemas.get(spec);
  if (!schema) {
    schema = buildSchema(spec);
    schemas.set(spec, schema);
  }
  return schema;
}

function buildSchema(spec: ParamSpec): z.ZodType<ParamValue> {
  switch (spec.kind) {
    case 'number':
      return z
        .number({ error: `expected a number in [${spec.min}, ${spec.max}]` })
        .refine((v) => Number.isFinite(v) && v >= spec.min && v <= spec.max, {
          message: `expected a number in [${spec.min}, ${spec.max}]`,
        });
    case 'int':
      return z
        .number({ error: `expected an integer in [${spec.min}, ${spec.max}]` })
        .refine((v) => Number.isInteger(v) && v >= spec.min && v <= spec.max, {
          message: `expected an integer in [${spec.min}, ${spec.max}]`,
        });
    case 'bool':
      return z.boolean({ error: 'expected true or false' });
    case 'choice':
      return z.string().refine((v) => spec.options.includes(v), {
        message: `expected one of ${spec.options.join(', ')}`,
      });
  }
}

/** Parses a value written as text (CLI `--set`, URL) by its spec; throws with what was expected. */
export function parseParamText(spec: ParamSpec, text: string): ParamValue {
  let value: ParamValue;
  if (spec.kind === 'number' || spec.kind === 'int') {
    value = parseNumberText(text);
  } else if (spec.kind === 'bool') {
    value = text === 'true' || text === '1' ? true : text === 'false' || text === '0' ? false : (text as never);
  } else {
    value = text;
  }
  const parsed = paramSchema(spec).safeParse(value);
  if (!parsed.success) throw new Error(parsed.error.issues[0]?.message ?? 'invalid value');
  return parsed.data;
}

/** One-line description of the accepted values, for --help. */
export function describeSpec(spec: ParamSpec): string {
  switch (spec.kind) {
    case 'number':
      return `number in [${spec.min}, ${spec.max}], default ${spec.default}`;
    case 'int':
      return `integer in [${spec.min}, ${spec.max}], default ${spec.default}`;
    case 'bool':
      return `true|false, default ${spec.default}`;
    case 'choice':
      return `one of ${spec.options.join('|')}, default ${spec.default}`;
  }
}
