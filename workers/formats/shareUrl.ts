/**
 * Share links (docs/ARCHITECTURE.md "The share link"): the run config as readable key=value pairs in the URL hash,
 * `#v=1&seed=7&batch=4&grpo.eps=0.001&step=3&focus=traj:2&hide=methods,task`, with only the fields
 * that differ from the defaults, in a stable order. A lesson's step is a link too:
 * `#v=1&...&step=20&lesson=collapse:2&present=1` (workers/content/lessons.ts; `present=1` asks for presenter
 * mode). The Compare view's two runs ride along as `compare=seed:7|methods:grpo,dapo;dapo.clipHigh:0.3`
 * (A|B, each the config's non-default fields), with `|step:30` once they have run (both are run to
 * that iteration when the link opens). The Arena view's arena rides along as `arena=<spec>`
 * (workers/content/arena/dimensions.ts arenaSpecToText), with `|done:2` once the first 2 seeds of
 * every cell have run (the link runs them again). DOM-free: the app, the CLI and the tests share it.
 *
 * A link is untrusted input. `decodeShareLink` never throws: it
 * caps the size first, validates every value through the config's zod-backed ParamSpecs (via
 * withFieldText / withMethods), reports each unknown key or bad value by name with what was
 * expected, and still applies the rest. Its output is a freshly built RunConfig, never a merge of
 * parsed objects, so keys such as `__proto__` reach nothing.
 */
import { z } from 'zod';
import type { BackendChoice } from '../entry/api';
import { arenaSpecToText, parseArenaSpec, type ArenaSpec } from '../content/arena/dimensions';
import { allFields, CONFIG_FIELDS, ConfigError, defaultConfig, fieldSpec, getField, withField, withFieldText, type RunConfig } from '../core/config';
import { lessonById, LESSON_IDS } from '../content/lessons';
import { METHOD_IDS } from '../core/methods';
import { paramSchema } from '../core/methods/params';
import { parseNumberText } from '../core/numberText';

/** The link format this build writes. */
export const LINK_VERSION = 1;
/** Longest link accepted, in characters (before decoding); checked before anything else. */
export const MAX_LINK_CHARS = 8192;
/** Most key=value pairs accepted in one link. */
export const MAX_LINK_KEYS = 200;
/** Highest `step=` accepted: a link may ask for a long run, not an endless one. */
export const MAX_LINK_STEP = 100_000;

/** Panels a link can hide with `hide=` (TensorFlow Playground's *_hide keys, as one list). */
export const PANEL_IDS = ['run', 'task', 'methods', 'charts', 'group', 'trajectory', 'batchlab', 'share', 'export', 'frameworks'] as const;
export type PanelId = (typeof PANEL_IDS)[number];

export type Focus = { kind: 'group'; index: number } | { kind: 'traj'; index: number };

/** A lesson and one of its steps (1-based), as `lesson=<id>:<step>` (`lesson=<id>` is step 1). */
export interface LessonRef {
  id: string;
  step: number;
}

/** What a link carries besides the config: the view of a classroom link, and the backend. */
export interface LinkExtras {
  /** Run to this iteration and pause there. */
  step?: number;
  /** Open this group's or this trajectory's view. */
  focus?: Focus;
  /** Panels to hide. */
  hide?: PanelId[];
  /** The backend the run was made on ('auto' is the default and is left out). */
  backend?: BackendChoice;
  /** The lesson (and step) the link belongs to: the page opens its panel there. */
  lesson?: LessonRef;
  /** Presenter mode: large type and only the panels the lesson needs. */
  present?: boolean;
  /** The Compare view open on these two runs (`compare=<A>|<B>`, each side a config's non-default fields). */
  compare?: ComparePair;
  /** The Arena view open on this arena (`arena=<spec>`, as arenaSpecToText writes it). */
  arena?: ArenaSpec;
  /** How many of the arena's seeds every cell had run (`arena=<spec>|done:<k>`): the link runs them. */
  arenaDone?: number;
}

export interface ComparePair {
  a: RunConfig;
  b: RunConfig;
  /** The iteration both runs had reached (`|step:<n>`): the link runs them to it and pauses. */
  step?: number;
}

export interface LinkProblem {
  /** The key as written in the link (shortened when very long). */
  key: string;
  /** The value as written (shortened), when there was one. */
  value?: string;
  /** What went wrong and what was expected. */
  message: string;
}

export interface DecodedLink extends LinkExtras {
  /** Always a valid config: the defaults with every good key of the link applied. */
  config: RunConfig;
  /** Problems, one per bad key; empty for a clean link. */
  errors: LinkProblem[];
  /** The link's version (after reading a missing `v` as version 0), or null if unreadable. */
  version: number | null;
  /** Set when an older link was migrated to the current format. */
  migratedFrom?: number;
}

/** Keys a link may hold besides the config fields and `methods`. */
const EXTRA_KEYS = ['v', 'step', 'focus', 'hide', 'backend', 'lesson', 'present', 'compare', 'arena'] as const;
const BACKENDS = ['auto', 'gpu', 'cpu'] as const;

/**
 * Older link formats and how each is brought forward, one version at a time. Version 0 is a link
 * without a `v` key (hand-written, or made before the key existed): its keys are those of version
 * 1, so it migrates with no renames. A later format change adds an entry here, so old links keep
 * working; a version with no entry, or newer than LINK_VERSION, is refused, never guessed at.
 */
export const LINK_MIGRATIONS: Record<number, { to: number; renames: Record<string, string> }> = {
  0: { to: 1, renames: {} },
};

const stepMessage = `expected an integer in [0, ${MAX_LINK_STEP}]`;
const stepSchema = z
  .string()
  .regex(/^\d{1,7}$/, { error: stepMessage })
  .transform(Number)
  .pipe(z.number().max(MAX_LINK_STEP, { error: stepMessage }));
const focusSchema = z
  .string()
  .regex(/^(group|traj):\d{1,7}$/, { error: 'expected group:G or traj:T (G, T: numbers from 0)' })
  .transform((s): Focus => {
    const [kind, n] = s.split(':') as ['group' | 'traj', string];
    return { kind, index: Number(n) };
  });
const backendSchema = z.enum(BACKENDS, { error: `expected one of ${BACKENDS.join(', ')}` });
const PRESENT_VALUES: Record<string, boolean> = { '1': true, true: true, '0': false, false: false };

/** `lesson=<id>` or `lesson=<id>:<step>`: a registered lesson and one of its steps. */
function parseLesson(value: string): LessonRef | string {
  const m = /^([a-z][a-z0-9-]{0,31})(?::(\d{1,3}))?$/.exec(value);
  const expected = `expected a lesson id (${LESSON_IDS.join(', ')}), optionally with :step`;
  if (!m) return expected;
  const lesson = lessonById(m[1]!);
  if (!lesson) return `unknown lesson; ${expected}`;
  const step = m[2] === undefined ? 1 : Number(m[2]);
  if (step < 1 || step > lesson.steps.length) return `lesson ${lesson.id} has steps 1 to ${lesson.steps.length}`;
  return { id: lesson.id, step };
}


/** Values are written readably: only characters that would break the hash are escaped. */
function encodeValue(v: string): string {
  return encodeURIComponent(v).replace(/%2C/gi, ',').replace(/%3A/gi, ':');
}

function shorten(s: string, max = 48): string {
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

/** The link text of a Focus: `group:3`, `traj:12`. */
export function focusText(f: Focus): string {
  return `${f.kind}:${f.index}`;
}

/**
 * The hash of a config: `#v=1` followed by every field that differs from the defaults (in the
 * order of CONFIG_FIELDS, then `methods`, then method parameters in registry order), then the
 * extras. Decoding it gives back the same config.
 *
 * @example encodeShareLink(withFieldText(defaultConfig(), 'seed', '7'), { step: 3 }) === '#v=1&seed=7&step=3'
 */
export function encodeShareLink(config: RunConfig, extras: LinkExtras = {}): string {
  const defaults = defaultConfig();
  const parts: string[] = [`v=${LINK_VERSION}`];
  const add = (key: string, value: string) => parts.push(`${key}=${encodeValue(value)}`);
  for (const key of Object.keys(CONFIG_FIELDS)) {
    const v = getField(config, key);
    if (v !== undefined && v !== getField(defaults, key)) add(key, String(v));
  }
  if (config.methods.join(',') !== defaults.methods.join(',')) add('methods', config.methods.join(','));
  for (const [key] of allFields()) {
    if (key in CONFIG_FIELDS) continue;
    const v = getField(config, key);
    if (v !== undefined && v !== getField(defaults, key)) add(key, String(v));
  }
  if (extras.backend && extras.backend !== 'auto') add('backend', extras.backend);
  if (extras.step !== undefined) add('step', String(extras.step));
  if (extras.focus) add('focus', focusText(extras.focus));
  if (extras.hide && extras.hide.length > 0) add('hide', [...new Set(extras.hide)].join(','));
  if (extras.lesson) add('lesson', `${extras.lesson.id}:${extras.lesson.step}`);
  if (extras.present) add('present', '1');
  // Written as is: each side is already escaped, and `;`, `:` and `|` keep it readable.
  if (extras.compare) {
    const at = extras.compare.step ? `|step:${extras.compare.step}` : '';
    parts.push(`compare=${compareSide(extras.compare.a)}|${compareSide(extras.compare.b)}${at}`);
  }
  if (extras.arena) parts.push(`arena=${encodeArena(arenaSpecToText(extras.arena))}${extras.arenaDone ? `|done:${extras.arenaDone}` : ''}`);
  return `#${parts.join('&')}`;
}

/** An arena's text with only what would break the hash escaped: its `;`, `:`, `,`, `=` and `|` stay readable. */
function encodeArena(text: string): string {
  return encodeURIComponent(text).replace(/%(2C|3A|3B|3D|7C)/gi, (m) => decodeURIComponent(m));
}

/**
 * One run of a compare link: the config's non-default fields as `key:value` pairs joined by `;`
 * (`seed:7;methods:grpo,dapo`); an empty side is the defaults.
 */
function compareSide(config: RunConfig): string {
  return encodeShareLink(config)
    .slice(1)
    .split('&')
    .filter((p) => !p.startsWith('v='))
    .map((p) => p.replace('=', ':'))
    .join(';');
}

/** `<text>|<name>:<n>`: the text and the count, or the problem with the count. */
function splitCount(value: string, name: string): { text: string; count?: number } | string {
  const bar = value.lastIndexOf('|');
  const tail = bar >= 0 ? value.slice(bar + 1) : '';
  if (!tail.startsWith(`${name}:`)) return { text: value };
  const r = stepSchema.safeParse(tail.slice(name.length + 1));
  if (!r.success) return `${name}: ${stepMessage}`;
  return { text: value.slice(0, bar), ...(r.data > 0 ? { count: r.data } : {}) };
}

/**
 * Reads `compare=<A>|<B>` or `compare=<A>|<B>|step:<n>`: both configs (and the iteration they ran
 * to), or the problems (named `compare A: key`), with nothing applied.
 */
function parseCompare(value: string): ComparePair | LinkProblem[] {
  const counted = splitCount(value, 'step');
  if (typeof counted === 'string') return [{ key: 'compare', value: shorten(value), message: counted }];
  const sides = counted.text.split('|');
  if (sides.length !== 2) return [{ key: 'compare', value: shorten(value), message: 'expected two runs, <A>|<B>, each key:value pairs joined by ;, then optionally |step:<iterations>' }];
  const problems: LinkProblem[] = [];
  const configs = sides.map((side, i) => {
    const name = `compare ${i === 0 ? 'A' : 'B'}`;
    const pairs = side.split(';').filter((p) => p.length > 0);
    const bad = pairs.filter((p) => !p.includes(':'));
    for (const p of bad) problems.push({ key: name, value: shorten(p), message: 'expected key:value' });
    const keys = pairs.map((p) => p.slice(0, p.indexOf(':')));
    for (const k of keys) {
      if ((EXTRA_KEYS as readonly string[]).includes(k)) problems.push({ key: `${name}: ${shorten(k)}`, message: 'expected a config key; a compared run holds only its config' });
    }
    const link = decodeShareLink(`#v=${LINK_VERSION}&${pairs.filter((p) => p.includes(':')).map((p) => p.replace(':', '=')).join('&')}`);
    for (const e of link.errors) problems.push({ ...e, key: `${name}: ${e.key}` });
    return link.config;
  });
  if (problems.length > 0) return problems;
  return { a: configs[0]!, b: configs[1]!, ...(counted.count ? { step: counted.count } : {}) };
}

/** The part after '#' of a full link, a hash, or bare `k=v&...` text; null if a URL has no hash. */
function hashBody(input: string): string | null {
  const text = input.trim();
  const hash = text.indexOf('#');
  if (hash >= 0) return text.slice(hash + 1);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return null;
  return text.startsWith('?') ? text.slice(1) : text;
}

function decodePart(s: string): string | null {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

/** Edit distance, for "did you mean" hints on short keys. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length]!;
}

/** Every key a link may hold. */
export function linkKeys(): string[] {
  return [...EXTRA_KEYS, 'methods', ...allFields().map(([k]) => k)];
}

function unknownKeyMessage(key: string): string {
  let best: string | null = null;
  if (key.length <= 40) {
    const limit = Math.max(2, Math.floor(key.length / 3));
    let bestD = limit + 1;
    for (const k of linkKeys()) {
      if (Math.abs(k.length - key.length) > limit) continue;
      const d = distance(key.toLowerCase(), k.toLowerCase());
      if (d < bestD) [best, bestD] = [k, d];
    }
  }
  return `unknown key${best ? ` (did you mean ${best}?)` : ''}; expected a config key (as in the CLI's --help), methods, v, step, focus, hide, backend, lesson, present, compare or arena`;
}

/**
 * Reads a share link: a full URL, a `#...` hash or bare `k=v&...` text. Never throws. The config
 * in the result is always valid; each problem is named in `errors`, and every good key applies.
 */
export function decodeShareLink(input: unknown): DecodedLink {
  const errors: LinkProblem[] = [];
  const refuse = (key: string, message: string, version: number | null = null): DecodedLink => ({
    config: defaultConfig(),
    errors: [{ key, message }],
    version,
  });
  try {
    if (typeof input !== 'string') return refuse('link', 'expected the text of a link');
    if (input.length > MAX_LINK_CHARS) {
      return refuse('link', `too long (${input.length} characters; a link holds at most ${MAX_LINK_CHARS})`);
    }
    const body = hashBody(input);
    if (body === null) return refuse('link', 'the address has no #… part holding a run config');

    // PLUMBING: split into pairs, decode, find duplicates. The first of a repeated key applies.
    const raw = body.split('&').filter((p) => p.length > 0);
    if (raw.length > MAX_LINK_KEYS) return refuse('link', `too many keys (${raw.length}; at most ${MAX_LINK_KEYS})`);
    const pairs = new Map<string, string>();
    for (const part of raw) {
      const eq = part.indexOf('=');
      const rawKey = eq >= 0 ? part.slice(0, eq) : part;
      const rawValue = eq >= 0 ? part.slice(eq + 1) : null;
      const decoded = decodePart(rawKey);
      const key = decoded === '' ? '(empty key)' : decoded;
      if (key === null) {
        errors.push({ key: shorten(rawKey), message: 'the key is not valid URL encoding' });
        continue;
      }
      if (rawValue === null) {
        errors.push({ key: shorten(key), message: 'expected key=value' });
        continue;
      }
      const value = decodePart(rawValue);
      if (value === null) {
        errors.push({ key: shorten(key), value: shorten(rawValue), message: 'the value is not valid URL encoding' });
        continue;
      }
      if (pairs.has(key)) {
        errors.push({ key: shorten(key), value: shorten(value), message: `given more than once; the first value (${shorten(pairs.get(key)!, 24)}) applies` });
        continue;
      }
      pairs.set(key, value);
    }

    // Version: read, migrate forward, or refuse.
    let version = 0;
    let migratedFrom: number | undefined;
    const vText = pairs.get('v');
    if (vText !== undefined) {
      if (!/^\d{1,6}$/.test(vText)) return refuse('v', `expected a link version number (this playground reads versions 0 to ${LINK_VERSION})`);
      version = Number(vText);
    }
    if (version > LINK_VERSION) {
      return refuse('v', `link version ${version} is newer than this playground (it reads versions 0 to ${LINK_VERSION}); open the link in a newer build`, version);
    }
    let current = pairs;
    while (version < LINK_VERSION) {
      const m = LINK_MIGRATIONS[version];
      if (!m) return refuse('v', `link version ${version} is no longer supported (this playground reads versions 0 to ${LINK_VERSION})`, version);
      const next = new Map<string, string>();
      // Object.hasOwn: a key such as `__proto__` must not find the prototype of the table.
      for (const [k, v] of current) next.set(Object.hasOwn(m.renames, k) ? m.renames[k]! : k, v);
      current = next;
      if (vText !== undefined) migratedFrom ??= version;
      version = m.to;
    }

    // ALGO LOGIC: apply `task`, then `methods`, then every other field, each through the config's validators.
    let config = defaultConfig();
    const apply = (key: string, value: string) => {
      try {
        const spec = fieldSpec(key);
        if (spec && (spec.kind === 'number' || spec.kind === 'int')) {
          // A number as a link writes it (JavaScript's shortest round-trip form), parsed as the CLI parses it.
          const n = parseNumberText(value);
          if (Number.isNaN(n)) throw new ConfigError(key, paramSchema(spec).safeParse(NaN).error?.issues[0]?.message ?? 'expected a number');
          config = withField(config, key, n);
        } else config = withFieldText(config, key, value);
      } catch (e) {
        const message = e instanceof ConfigError ? e.expected : e instanceof Error ? e.message : String(e);
        errors.push({ key: shorten(key), value: shorten(value), message });
      }
    };
    const fieldKeys = new Set(allFields().map(([k]) => k));
    // The task first: which methods are allowed depends on it.
    const task = current.get('task');
    if (task !== undefined) apply('task', task);
    const methods = current.get('methods');
    if (methods !== undefined) {
      // Checked against the id list here: `toString` or `__proto__` must not pass for a method.
      const unknown = methods.split(',').filter((id) => id.length > 0 && !(METHOD_IDS as readonly string[]).includes(id));
      if (unknown.length > 0) {
        errors.push({ key: 'methods', value: shorten(methods), message: `unknown method "${shorten(unknown[0]!, 24)}"; expected some of ${METHOD_IDS.join(', ')}` });
      } else apply('methods', methods);
    }
    const out: DecodedLink = { config, errors, version };
    for (const [key, value] of current) {
      if (key === 'methods' || key === 'task' || key === 'v') continue;
      if (fieldKeys.has(key)) {
        apply(key, value);
        continue;
      }
      switch (key) {
        case 'step': {
          const r = stepSchema.safeParse(value);
          if (r.success) out.step = r.data;
          else errors.push({ key, value: shorten(value), message: r.error.issues[0]?.message ?? 'invalid value' });
          break;
        }
        case 'focus': {
          const r = focusSchema.safeParse(value);
          if (r.success) out.focus = r.data;
          else errors.push({ key, value: shorten(value), message: r.error.issues[0]?.message ?? 'invalid value' });
          break;
        }
        case 'backend': {
          const r = backendSchema.safeParse(value);
          if (r.success) out.backend = r.data;
          else errors.push({ key, value: shorten(value), message: `expected one of ${BACKENDS.join(', ')}` });
          break;
        }
        case 'lesson': {
          const r = parseLesson(value);
          if (typeof r === 'string') errors.push({ key, value: shorten(value), message: r });
          else out.lesson = r;
          break;
        }
        case 'present': {
          const r = Object.hasOwn(PRESENT_VALUES, value) ? PRESENT_VALUES[value] : undefined;
          if (r === undefined) errors.push({ key, value: shorten(value), message: 'expected 1 or 0' });
          else if (r) out.present = true;
          break;
        }
        case 'compare': {
          const r = parseCompare(value);
          if (Array.isArray(r)) errors.push(...r);
          else out.compare = r;
          break;
        }
        case 'arena': {
          try {
            const counted = splitCount(value, 'done');
            if (typeof counted === 'string') throw new Error(counted);
            out.arena = parseArenaSpec(counted.text);
            if (counted.count) out.arenaDone = counted.count;
          } catch (e) {
            errors.push({ key, value: shorten(value), message: e instanceof Error ? e.message : String(e) });
          }
          break;
        }
        case 'hide': {
          const ids = value.split(',').filter((s) => s.length > 0);
          const bad = ids.filter((id) => !(PANEL_IDS as readonly string[]).includes(id));
          if (bad.length > 0) {
            errors.push({
              key,
              value: shorten(bad.join(',')),
              message: `unknown panel ${bad.map((b) => `"${shorten(b, 24)}"`).join(', ')}; expected some of ${PANEL_IDS.join(', ')}`,
            });
          }
          const good = [...new Set(ids.filter((id) => (PANEL_IDS as readonly string[]).includes(id)))] as PanelId[];
          if (good.length > 0) out.hide = good;
          break;
        }
        default:
          errors.push({ key: shorten(key), value: shorten(value), message: unknownKeyMessage(key) });
      }
    }
    out.config = config;

    // A focus must point into this config's batch.
    if (out.focus) {
      const { kind, index } = out.focus;
      const count = kind === 'group' ? config.batch : config.batch * config.group;
      if (index >= count) {
        errors.push({
          key: 'focus',
          value: focusText(out.focus),
          message: `${kind === 'group' ? 'group' : 'trajectory'} ${index} is outside this batch (expected ${kind}:0 to ${kind}:${count - 1})`,
        });
        delete out.focus;
      }
    }
    if (migratedFrom !== undefined) out.migratedFrom = migratedFrom;
    return out;
  } catch (e) {
    // Defensive: nothing above should throw, but a link must never break the page.
    return refuse('link', `could not be read (${e instanceof Error ? e.message : String(e)})`);
  }
}

/** One line for a problem: `batch = "abc": expected an integer in [1, 1024]`. */
export function describeProblem(p: LinkProblem): string {
  return p.value !== undefined ? `${p.key} = "${p.value}": ${p.message}` : `${p.key}: ${p.message}`;
}
