/**
 * Share links (docs/ARCHITECTURE.md "The share link"): the run config as readable key=value pairs in the URL hash,
 * `#v=1&seed=7&batch=4&grpo.eps=0.001&step=3&focus=traj:2&hide=methods,task`, with only the fields
 * that differ from the defaults, in a stable order. A lesson's step is a link too:
 * `#v=1&...&step=20&lesson=collapse:2&present=1` (workers/content/lessons.ts; `present=1` asks for presenter
 * mode). The Compare view's two runs ride along as `compare=seed:7|methods:grpo,dapo;dapo.clipHigh:0.3`
 * (A|B, each the config's non-default fields), with `|step:30` once they have run (both are run to
 * that iteration when the link opens). The Arena view's arena rides along as `arena=<spec>`
 * (workers/content/arena/dimensions.ts arenaSpecToText), with `|done:2` once the first 2 seeds of
 * every cell have run (the link runs them again). An explained number rides along as
 * `explain=ITER.TRAJ.TOKEN` (optionally `:ratio`, `:clip`, ...), step-through's stage as `stage=NAME`
 * (docs/EXPLAIN.md). DOM-free: the app, the CLI and the tests share it.
 * Lessons and arenas are content, a folder above this one: the reader and writer take them as a
 * `LinkContent`, which workers/content/shareLink.ts binds (`encodeShareLink`, `decodeShareLink`).
 *
 * A link is untrusted input. `decodeLink` never throws: it
 * caps the size first, validates every value through the config's zod-backed ParamSpecs (via
 * withFieldText / withMethods), reports each unknown key or bad value by name with what was
 * expected, and still applies the rest. Its output is a freshly built RunConfig, never a merge of
 * parsed objects, so keys such as `__proto__` reach nothing.
 */
import { z } from 'zod';
import { BACKEND_CHOICES, type BackendChoice } from '../core/backend';
import { allFields, CONFIG_FIELDS, ConfigError, defaultConfig, fieldSpec, getField, withField, withFieldText, type RunConfig } from '../core/config';
import { isMethodId, METHOD_IDS } from '../core/methods';
import { paramSchema } from '../core/methods/params';
import { parseNumberText } from '../core/numberText';
import { LINK_QUANTITIES, STAGE_NAMES, type LinkQuantity, type StageName } from './explainLinkNames';

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

/**
 * An explained number (`explain=ITER.TRAJ.TOKEN`, optionally `:QUANTITY`): the token's index in its
 * trajectory's token list as the batch dump lists them, of the batch of iteration ITER; the
 * advantage unless a quantity is named.
 */
export interface ExplainLink {
  iter: number;
  traj: number;
  tok: number;
  q: LinkQuantity;
}

/** A lesson and one of its steps (1-based), as `lesson=<id>:<step>` (`lesson=<id>` is step 1). */
export interface LessonRef {
  id: string;
  step: number;
}

/**
 * The lessons and arenas a link's `lesson` and `arena` keys name (workers/content binds them):
 * a lesson's step count by id, and the arena spec's text form both ways.
 */
export interface LinkContent<Arena> {
  lessonIds: readonly string[];
  /** Steps of the lesson `id`, or null for no such lesson. */
  lessonSteps(id: string): number | null;
  /** Reads `arena=<spec>`; throws with what was wrong. */
  parseArena(text: string): Arena;
  arenaText(arena: Arena): string;
}

/** What a link carries besides the config: the view of a classroom link, and the backend. */
export interface LinkExtrasOf<Arena> {
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
  arena?: Arena;
  /** How many of the arena's seeds every cell had run (`arena=<spec>|done:<k>`): the link runs them. */
  arenaDone?: number;
  /** A number explained (docs/EXPLAIN.md): opened once the run has reached its iteration. */
  explain?: ExplainLink;
  /** Step-through open at this stage of the iteration (workers/explain/stages.ts). */
  stage?: StageName;
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

export interface DecodedLinkOf<Arena> extends LinkExtrasOf<Arena> {
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
const EXTRA_KEYS = ['v', 'step', 'focus', 'hide', 'backend', 'lesson', 'present', 'compare', 'arena', 'explain', 'stage'] as const;

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
const backendSchema = z.enum(BACKEND_CHOICES, { error: `expected one of ${BACKEND_CHOICES.join(', ')}` });
const explainMessage = `expected ITER.TRAJ.TOKEN (numbers; ITER from 1), optionally :${LINK_QUANTITIES.join('|')}`;
const explainSchema = z
  .string()
  .regex(new RegExp(`^\\d{1,7}\\.\\d{1,7}\\.\\d{1,7}(:(${LINK_QUANTITIES.join('|')}))?$`), { error: explainMessage })
  .transform((s): ExplainLink => {
    const [pos, q] = s.split(':') as [string, LinkQuantity | undefined];
    const [iter, traj, tok] = pos.split('.').map(Number) as [number, number, number];
    return { iter, traj, tok, q: q ?? 'adv' };
  })
  .refine((e) => e.iter >= 1 && e.iter <= MAX_LINK_STEP, { error: `expected an iteration in [1, ${MAX_LINK_STEP}]` });

/** The link text of an ExplainLink: `3.5.2`, `3.5.2:ratio`. */
export function explainText(e: ExplainLink): string {
  return `${e.iter}.${e.traj}.${e.tok}${e.q === 'adv' ? '' : `:${e.q}`}`;
}
const PRESENT_VALUES: Record<string, boolean> = { '1': true, true: true, '0': false, false: false };

/**
 * `lesson=<id>` or `lesson=<id>:<step>`: a registered lesson and one of its steps. The id is read
 * first and the step after it, so a known lesson with a bad step (`:1000`, `:-1`, `:1.5`) is
 * reported as a bad step, not as a bad lesson id.
 */
function parseLesson(value: string, content: LinkContent<unknown>): LessonRef | string {
  const m = /^([a-z][a-z0-9-]{0,31})(?::(.*))?$/s.exec(value);
  const expected = `expected a lesson id (${content.lessonIds.join(', ')}), optionally with :step`;
  if (!m) return expected;
  const steps = content.lessonSteps(m[1]!);
  if (steps === null) return `unknown lesson; ${expected}`;
  const stepText = m[2];
  const step = stepText === undefined ? 1 : /^\d{1,3}$/.test(stepText) ? Number(stepText) : NaN;
  if (!(step >= 1 && step <= steps)) return `lesson ${m[1]} has steps 1 to ${steps}`;
  return { id: m[1]!, step };
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
 * @example encodeLink(withFieldText(defaultConfig(), 'seed', '7'), { step: 3 }, content) === '#v=1&seed=7&step=3'
 */
export function encodeLink<Arena>(config: RunConfig, extras: LinkExtrasOf<Arena>, content: LinkContent<Arena>): string {
  const parts = [encodeConfigLink(config).slice(1)];
  const add = (key: string, value: string) => parts.push(`${key}=${encodeValue(value)}`);
  if (extras.backend && extras.backend !== 'auto') add('backend', extras.backend);
  if (extras.step !== undefined) add('step', String(extras.step));
  if (extras.focus) add('focus', focusText(extras.focus));
  if (extras.hide && extras.hide.length > 0) add('hide', [...new Set(extras.hide)].join(','));
  if (extras.lesson) add('lesson', `${extras.lesson.id}:${extras.lesson.step}`);
  if (extras.present) add('present', '1');
  if (extras.explain) add('explain', explainText(extras.explain));
  if (extras.stage) add('stage', extras.stage);
  // Written as is: each side is already escaped, and `;`, `:` and `|` keep it readable.
  if (extras.compare) {
    const at = extras.compare.step ? `|step:${extras.compare.step}` : '';
    parts.push(`compare=${compareSide(extras.compare.a)}|${compareSide(extras.compare.b)}${at}`);
  }
  if (extras.arena) parts.push(`arena=${encodeArena(content.arenaText(extras.arena))}${extras.arenaDone ? `|done:${extras.arenaDone}` : ''}`);
  return `#${parts.join('&')}`;
}

/** The hash of a config alone (no extras), as encodeLink starts it. */
export function encodeConfigLink(config: RunConfig): string {
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
  return encodeConfigLink(config)
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
function parseCompare(value: string, content: LinkContent<unknown>): ComparePair | LinkProblem[] {
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
    const link = decodeLink(`#v=${LINK_VERSION}&${pairs.filter((p) => p.includes(':')).map((p) => p.replace(':', '=')).join('&')}`, content);
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
  return `unknown key${best ? ` (did you mean ${best}?)` : ''}; expected a config key (as in the CLI's --help), methods, v, step, focus, hide, backend, lesson, present, compare, arena, explain or stage`;
}

/**
 * Reads a share link: a full URL, a `#...` hash or bare `k=v&...` text. Never throws. The config
 * in the result is always valid; each problem is named in `errors`, and every good key applies.
 */
export function decodeLink<Arena>(input: unknown, content: LinkContent<Arena>): DecodedLinkOf<Arena> {
  const errors: LinkProblem[] = [];
  const refuse = (key: string, message: string, version: number | null = null): DecodedLinkOf<Arena> => ({
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
    const raw = body.split('&').filter((p) => p.length > 0);
    if (raw.length > MAX_LINK_KEYS) return refuse('link', `too many keys (${raw.length}; at most ${MAX_LINK_KEYS})`);
    const read = migrate(splitPairs(raw, errors));
    if ('refused' in read) return refuse('v', read.refused, read.version);
    const { pairs, version, migratedFrom } = read;
    const config = { current: defaultConfig() };
    applyConfigKeys(config, pairs, errors);
    const out: DecodedLinkOf<Arena> = { config: config.current, errors, version };
    const fieldKeys = new Set(allFields().map(([k]) => k));
    for (const [key, value] of pairs) {
      if (key === 'methods' || key === 'task' || key === 'v') continue;
      if (fieldKeys.has(key)) applyField(config, key, value, errors);
      else applyExtra(out, key, value, content, errors);
    }
    out.config = config.current;
    checkViews(out, errors);
    checkFocus(out, errors);
    checkExplain(out, errors);
    if (migratedFrom !== undefined) out.migratedFrom = migratedFrom;
    return out;
  } catch (e) {
    // Defensive: nothing above should throw, but a link must never break the page.
    return refuse('link', `could not be read (${e instanceof Error ? e.message : String(e)})`);
  }
}

/** The link's pairs, decoded; a key given twice keeps its first value. Each bad pair is named in `errors`. */
function splitPairs(raw: string[], errors: LinkProblem[]): Map<string, string> {
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
  return pairs;
}

/** Reads the version, then migrates the pairs forward to LINK_VERSION; a version it cannot read is refused. */
function migrate(pairs: Map<string, string>): { pairs: Map<string, string>; version: number; migratedFrom?: number } | { refused: string; version: number | null } {
  let version = 0;
  let migratedFrom: number | undefined;
  const vText = pairs.get('v');
  if (vText !== undefined) {
    if (!/^\d{1,6}$/.test(vText)) return { refused: `expected a link version number (this playground reads versions 0 to ${LINK_VERSION})`, version: null };
    version = Number(vText);
  }
  if (version > LINK_VERSION) {
    return { refused: `link version ${version} is newer than this playground (it reads versions 0 to ${LINK_VERSION}); open the link in a newer build`, version };
  }
  let current = pairs;
  while (version < LINK_VERSION) {
    const m = LINK_MIGRATIONS[version];
    if (!m) return { refused: `link version ${version} is no longer supported (this playground reads versions 0 to ${LINK_VERSION})`, version };
    const next = new Map<string, string>();
    // Object.hasOwn: a key such as `__proto__` must not find the prototype of the table.
    for (const [k, v] of current) next.set(Object.hasOwn(m.renames, k) ? m.renames[k]! : k, v);
    current = next;
    if (vText !== undefined) migratedFrom ??= version;
    version = m.to;
  }
  return { pairs: current, version, ...(migratedFrom !== undefined ? { migratedFrom } : {}) };
}

/** One config field through the config's validators; a bad value is named in `errors` and not applied. */
function applyField(config: { current: RunConfig }, key: string, value: string, errors: LinkProblem[]): void {
  try {
    const spec = fieldSpec(key);
    if (spec && (spec.kind === 'number' || spec.kind === 'int')) {
      // A number as a link writes it (JavaScript's shortest round-trip form), parsed as the CLI parses it.
      const n = parseNumberText(value);
      if (Number.isNaN(n)) throw new ConfigError(key, paramSchema(spec).safeParse(NaN).error?.issues[0]?.message ?? 'expected a number');
      config.current = withField(config.current, key, n);
    } else config.current = withFieldText(config.current, key, value);
  } catch (e) {
    const message = e instanceof ConfigError ? e.expected : e instanceof Error ? e.message : String(e);
    errors.push({ key: shorten(key), value: shorten(value), message });
  }
}

/** `task` first (which methods are allowed depends on it), then `methods`, checked against the id list. */
function applyConfigKeys(config: { current: RunConfig }, pairs: Map<string, string>, errors: LinkProblem[]): void {
  const task = pairs.get('task');
  if (task !== undefined) applyField(config, 'task', task, errors);
  const methods = pairs.get('methods');
  if (methods === undefined) return;
  // Checked against the id list here: `toString` or `__proto__` must not pass for a method.
  const unknown = methods.split(',').filter((id) => id.length > 0 && !isMethodId(id));
  if (unknown.length > 0) {
    errors.push({ key: 'methods', value: shorten(methods), message: `unknown method "${shorten(unknown[0]!, 24)}"; expected some of ${METHOD_IDS.join(', ')}` });
  } else applyField(config, 'methods', methods, errors);
}

/** A key besides the config's: the view (step, focus, hide, present), the backend, a lesson, a comparison, an arena. */
function applyExtra<Arena>(out: DecodedLinkOf<Arena>, key: string, value: string, content: LinkContent<Arena>, errors: LinkProblem[]): void {
  const invalid = (message: string) => errors.push({ key, value: shorten(value), message });
  switch (key) {
    case 'step': {
      const r = stepSchema.safeParse(value);
      if (r.success) out.step = r.data;
      else invalid(r.error.issues[0]?.message ?? 'invalid value');
      return;
    }
    case 'focus': {
      const r = focusSchema.safeParse(value);
      if (r.success) out.focus = r.data;
      else invalid(r.error.issues[0]?.message ?? 'invalid value');
      return;
    }
    case 'backend': {
      const r = backendSchema.safeParse(value);
      if (r.success) out.backend = r.data;
      else invalid(`expected one of ${BACKEND_CHOICES.join(', ')}`);
      return;
    }
    case 'lesson': {
      const r = parseLesson(value, content);
      if (typeof r === 'string') invalid(r);
      else out.lesson = r;
      return;
    }
    case 'present': {
      const r = Object.hasOwn(PRESENT_VALUES, value) ? PRESENT_VALUES[value] : undefined;
      if (r === undefined) invalid('expected 1 or 0');
      else if (r) out.present = true;
      return;
    }
    case 'compare': {
      const r = parseCompare(value, content);
      if (Array.isArray(r)) errors.push(...r);
      else out.compare = r;
      return;
    }
    case 'arena':
      try {
        const counted = splitCount(value, 'done');
        if (typeof counted === 'string') throw new Error(counted);
        out.arena = content.parseArena(counted.text);
        if (counted.count) out.arenaDone = counted.count;
      } catch (e) {
        invalid(e instanceof Error ? e.message : String(e));
      }
      return;
    case 'explain': {
      const r = explainSchema.safeParse(value);
      if (r.success) out.explain = r.data;
      else invalid(r.error.issues[0]?.message ?? explainMessage);
      return;
    }
    case 'stage':
      if ((STAGE_NAMES as readonly string[]).includes(value)) out.stage = value as StageName;
      else invalid(`unknown stage; expected one of ${STAGE_NAMES.join(', ')}`);
      return;
    case 'hide': {
      const hide = parseHide(value, errors);
      if (hide) out.hide = hide;
      return;
    }
    default:
      errors.push({ key: shorten(key), value: shorten(value), message: unknownKeyMessage(key) });
  }
}

/** `hide=a,b`: the known panels (each once); the unknown ones are named in `errors`. */
function parseHide(value: string, errors: LinkProblem[]): PanelId[] | undefined {
  const ids = value.split(',').filter((s) => s.length > 0);
  const known = (id: string): id is PanelId => (PANEL_IDS as readonly string[]).includes(id);
  const bad = ids.filter((id) => !known(id));
  if (bad.length > 0) {
    errors.push({
      key: 'hide',
      value: shorten(bad.join(',')),
      message: `unknown panel ${bad.map((b) => `"${shorten(b, 24)}"`).join(', ')}; expected some of ${PANEL_IDS.join(', ')}`,
    });
  }
  const good = [...new Set(ids.filter(known))];
  return good.length > 0 ? good : undefined;
}

/**
 * A page shows one view: the Arena wins over Compare (as the page applies them), and the key that
 * loses is named, not dropped in silence. Presenter mode is a lesson's: without one it is named too.
 */
function checkViews(out: { arena?: unknown; compare?: ComparePair; present?: boolean; lesson?: LessonRef }, errors: LinkProblem[]): void {
  if (out.arena && out.compare) {
    errors.push({ key: 'compare', message: 'not opened: this link also opens the Arena view (arena=), and the page shows one view at a time; leave out one of them' });
    delete out.compare;
  }
  if (out.present && !out.lesson) {
    errors.push({ key: 'present', value: '1', message: 'presenter mode shows a lesson: add lesson=<id> (or leave present out)' });
    delete out.present;
  }
}

/** A focus must point into this config's batch; one past it is named and dropped. */
function checkFocus(out: { config: RunConfig; focus?: Focus }, errors: LinkProblem[]): void {
  if (!out.focus) return;
  const { kind, index } = out.focus;
  const count = kind === 'group' ? out.config.batch : out.config.batch * out.config.group;
  if (index < count) return;
  errors.push({
    key: 'focus',
    value: focusText(out.focus),
    message: `${kind === 'group' ? 'group' : 'trajectory'} ${index} is outside this batch (expected ${kind}:0 to ${kind}:${count - 1})`,
  });
  delete out.focus;
}

/** An explained number belongs to the batch of its iteration: a link that pauses elsewhere never shows it. */
function checkExplain(out: { step?: number; explain?: ExplainLink }, errors: LinkProblem[]): void {
  if (!out.explain || out.step === undefined || out.step === out.explain.iter) return;
  errors.push({
    key: 'explain',
    value: explainText(out.explain),
    message: `iteration ${out.explain.iter} is not where the link pauses (step=${out.step}); the batch shown is iteration ${out.step}'s`,
  });
  delete out.explain;
}

/** One line for a problem: `batch = "abc": expected an integer in [1, 1024]`. */
export function describeProblem(p: LinkProblem): string {
  return p.value !== undefined ? `${p.key} = "${p.value}": ${p.message}` : `${p.key}: ${p.message}`;
}
