/**
 * `--name value` flags of the small bench scripts (bench:host, soak): every flag must be one the
 * script names, with a value; numbers must be positive whole numbers, and words one of those named. A mistake stops the script
 * with one line, exit status 2, before any work: `--iter 100` for `--iters` used to start the
 * default ten-minute soak.
 */

export type FlagKind = 'count' | 'counts' | 'text';

export interface FlagSpec {
  kind: FlagKind;
  /** The value when the flag is absent. */
  fallback: string;
  /** 'text' only: the words each comma-separated item of a given value must be one of. */
  oneOf?: readonly string[];
}

export type FlagValues<S extends Record<string, FlagSpec>> = {
  [K in keyof S]: S[K]['kind'] extends 'count' ? number : S[K]['kind'] extends 'counts' ? number[] : string;
};

export class FlagError extends Error {}

function count(flag: string, text: string): number {
  const n = Number(text);
  if (!(Number.isInteger(n) && n >= 1)) throw new FlagError(`--${flag}: "${text}" is not a whole number >= 1`);
  return n;
}

/** Reads `argv` (process.argv.slice(2)) against `spec`; throws a FlagError naming the first mistake. */
export function parseFlags<S extends Record<string, FlagSpec>>(argv: readonly string[], spec: S): FlagValues<S> {
  const given = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const name = a.startsWith('--') ? a.slice(2) : null;
    if (name === null || !(name in spec)) {
      throw new FlagError(`unknown flag ${a}; the flags are ${Object.keys(spec).map((k) => `--${k}`).join(', ')}`);
    }
    const v = argv[i + 1];
    if (v === undefined || v.startsWith('--')) throw new FlagError(`--${name} needs a value`);
    given.set(name, v);
    i++;
  }
  const out: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(spec)) {
    const text = given.get(name) ?? s.fallback;
    if (s.oneOf && given.has(name)) {
      for (const item of text.split(',')) {
        if (!s.oneOf.includes(item)) throw new FlagError(`--${name}: "${item}" is not one of ${s.oneOf.join(', ')}`);
      }
    }
    out[name] = s.kind === 'count' ? count(name, text) : s.kind === 'counts' ? text.split(',').map((x) => count(name, x)) : text;
  }
  return out as FlagValues<S>;
}

/** Parses the script's flags, or prints the mistake and the usage and exits with status 2. */
export function flagsOrExit<S extends Record<string, FlagSpec>>(spec: S, usage: string): FlagValues<S> {
  try {
    return parseFlags(process.argv.slice(2), spec);
  } catch (e) {
    if (!(e instanceof FlagError)) throw e;
    process.stderr.write(`error: ${e.message}\nusage: ${usage}\n`);
    process.exit(2);
  }
}
