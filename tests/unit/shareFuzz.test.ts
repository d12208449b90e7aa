/**
 * Fuzzing share links (seeded, so a failure reproduces): thousands of mutated valid links and
 * random ones, with script payloads, huge values, unicode, lone surrogates and prototype keys. Each
 * must decode without throwing into a valid config, with every problem named, and must leave
 * Object.prototype alone.
 */
import { describe, expect, it } from 'vitest';
import { allFields, defaultConfig, getField, parseConfig, withField } from '../../workers/core/config';
import { METHOD_IDS } from '../../workers/core/methods';
import { lessonById, LESSONS } from '../../workers/content/lessons';
import { paramSchema, type ParamSpec, type ParamValue } from '../../workers/core/methods/params';
import { createRng, type Rng } from '../../workers/core/rng';
import { decodeShareLink, encodeShareLink, type DecodedLink } from '../../workers/content/shareLink';
import { linkKeys, MAX_LINK_CHARS, PANEL_IDS } from '../../workers/formats/shareUrl';

const PAYLOADS = [
  '<img src=x onerror=alert(1)>',
  '<script>alert(1)</script>',
  '"><svg/onload=alert(1)>',
  "javascript:alert('x')",
  '${alert(1)}',
  '{{constructor.constructor("alert(1)")()}}',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '__proto__[polluted]',
  'constructor.prototype.polluted',
  'grpo.__proto__',
  'env.__proto__.polluted',
  'methodParams.grpo.eps',
  'NaN',
  'Infinity',
  '-Infinity',
  '1e309',
  '-0',
  '0x10',
  '1_000',
  ' 1',
  'true',
  'null',
  'undefined',
  '%',
  '%%',
  '%E0%A4%A',
  '%ED%A0%80',
  '\uD800',
  '\uDFFF\uD800',
  '😀🧪',
  '\u202Egnp.exe',
  'ＧＲＰＯ',
  'ﬁ',
  '\u0000',
  '\n\r\t',
  '=',
  '==',
  '&&',
  '#',
  '##v=1',
  ',,,',
  'group:',
  'traj:-1',
  'traj:99999999999',
];

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz.0123456789=&,:#%-+_ <>"\'/\\😀é\u0000';

function pick<T>(rng: Rng, xs: readonly T[]): T {
  return xs[rng.int(xs.length)]!;
}

function randomValue(rng: Rng, spec: ParamSpec): ParamValue {
  switch (spec.kind) {
    case 'number':
      return spec.min + rng.next() * (spec.max - spec.min);
    case 'int':
      return spec.min + rng.int(Math.min(spec.max - spec.min + 1, 1000));
    case 'bool':
      return rng.next() < 0.5;
    case 'choice':
      return pick(rng, spec.options);
  }
}

/** A valid link with a random config and view. */
function validLink(rng: Rng): string {
  let cfg = defaultConfig();
  for (const [key, spec] of allFields()) if (rng.next() < 0.3) cfg = withField(cfg, key, randomValue(rng, spec));
  const n = cfg.batch * cfg.group;
  return encodeShareLink(cfg, {
    step: rng.next() < 0.5 ? rng.int(50) : undefined,
    focus: rng.next() < 0.5 ? (rng.next() < 0.5 ? { kind: 'group', index: rng.int(cfg.batch) } : { kind: 'traj', index: rng.int(n) }) : undefined,
    hide: rng.next() < 0.3 ? PANEL_IDS.filter(() => rng.next() < 0.3) : undefined,
    backend: rng.next() < 0.2 ? pick(rng, ['cpu', 'gpu', 'auto'] as const) : undefined,
    lesson: rng.next() < 0.2 ? randomLesson(rng) : undefined,
    present: rng.next() < 0.1 ? true : undefined,
  });
}

function randomLesson(rng: Rng): { id: string; step: number } {
  const l = pick(rng, [...LESSONS]);
  return { id: l.id, step: 1 + rng.int(l.steps.length) };
}

function randomText(rng: Rng, len: number): string {
  let s = '';
  for (let i = 0; i < len; i++) s += pick(rng, [...ALPHABET]);
  return s;
}

/** One random edit of a link. */
function mutate(rng: Rng, link: string): string {
  const parts = link.slice(1).split('&');
  const i = rng.int(parts.length);
  switch (rng.int(12)) {
    case 0: {
      const at = rng.int(link.length + 1);
      return link.slice(0, at) + randomText(rng, 1 + rng.int(4)) + link.slice(at);
    }
    case 1: {
      const at = rng.int(link.length);
      return link.slice(0, at) + link.slice(at + 1 + rng.int(3));
    }
    case 2:
      return link.slice(0, rng.int(link.length + 1));
    case 3:
      parts.push(parts[i]!.replace(/=.*/, `=${pick(rng, PAYLOADS)}`));
      break;
    case 4:
      parts[i] = `${pick(rng, PAYLOADS)}=${pick(rng, PAYLOADS)}`;
      break;
    case 5:
      parts[i] = parts[i]!.replace(/=.*/, `=${encodeURIComponent(pick(rng, PAYLOADS).replace(/[\uD800-\uDFFF]/g, 'x'))}`);
      break;
    case 6:
      parts.push(`${pick(rng, linkKeys())}=${pick(rng, PAYLOADS)}`);
      break;
    case 7:
      parts.push(`${pick(rng, linkKeys())}=${'9'.repeat(1 + rng.int(400))}`);
      break;
    case 8:
      parts.splice(i, 0, parts[i]!);
      break;
    case 9:
      parts.reverse();
      break;
    case 10:
      parts[i] = parts[i]!.toUpperCase();
      break;
    case 11:
      parts.push(`${pick(rng, linkKeys())}=${randomText(rng, rng.int(20))}`);
      break;
  }
  return `#${parts.join('&')}`;
}

const FIELDS = allFields().map(([key, spec]) => [key, paramSchema(spec)] as const);
const METHOD_SET = new Set<string>(METHOD_IDS);
let checks = 0;

/** The invariants every decode must hold. */
function check(link: string, d: DecodedLink): void {
  // A valid config: every field passes its zod schema, methods are registered; and (every 7th
  // time, as it is slower) it survives the strict whole-config parser unchanged.
  for (const [key, schema] of FIELDS) {
    if (!schema.safeParse(getField(d.config, key)).success) throw new Error(`${link}: ${key} invalid`);
  }
  expect(d.config.methods.every((m) => METHOD_SET.has(m)), link).toBe(true);
  if (checks++ % 7 === 0) expect(parseConfig(JSON.parse(JSON.stringify(d.config))), link).toEqual(d.config);
  expect(Object.getPrototypeOf(d.config)).toBe(Object.prototype);
  for (const e of d.errors) {
    expect(typeof e.key, link).toBe('string');
    expect(e.key.length, link).toBeGreaterThan(0);
    expect(e.key.length, link).toBeLessThanOrEqual(49);
    expect(e.message.length, link).toBeGreaterThan(5);
    if (e.value !== undefined) expect(e.value.length, link).toBeLessThanOrEqual(49);
  }
  if (d.focus) {
    const count = d.focus.kind === 'group' ? d.config.batch : d.config.batch * d.config.group;
    expect(d.focus.index).toBeLessThan(count);
  }
  if (d.hide) for (const h of d.hide) expect(PANEL_IDS).toContain(h);
  if (d.step !== undefined) expect(Number.isInteger(d.step) && d.step >= 0).toBe(true);
  if (d.lesson) expect(d.lesson.step).toBeLessThanOrEqual(lessonById(d.lesson.id)!.steps.length);
  if (d.present !== undefined) expect(d.present).toBe(true);
  // What was applied is itself a clean link that decodes to the same thing.
  const again = decodeShareLink(encodeShareLink(d.config, d));
  expect(again.errors, link).toEqual([]);
  expect(again.config).toEqual(d.config);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
}

describe('share-link fuzzing', () => {
  it('mutated valid links: never throw, always a valid config or named errors', () => {
    const rng = createRng(0x5eed);
    let withErrors = 0;
    const pool = Array.from({ length: 300 }, () => validLink(rng));
    // 1,000 links: each decodes, re-encodes and decodes again (about 13 ms here), and 3,000 took
    // 40-90 s of the unit suite, past its limit under load.
    for (let n = 0; n < 1000; n++) {
      let link = pick(rng, pool);
      const edits = 1 + rng.int(4);
      for (let k = 0; k < edits; k++) link = mutate(rng, link);
      const d = decodeShareLink(link);
      check(link, d);
      if (d.errors.length) withErrors++;
    }
    // The mutations mostly break something, and some leave the link valid.
    expect(withErrors).toBeGreaterThan(500);
    expect(withErrors).toBeLessThan(1000);
  });

  it('random text and random key=value soup: never throw', () => {
    const rng = createRng(77);
    for (let n = 0; n < 2000; n++) {
      const link =
        rng.next() < 0.5
          ? randomText(rng, rng.int(200))
          : `#${Array.from({ length: rng.int(30) }, () => `${rng.next() < 0.7 ? pick(rng, linkKeys()) : pick(rng, PAYLOADS)}=${rng.next() < 0.5 ? pick(rng, PAYLOADS) : randomText(rng, rng.int(12))}`).join('&')}`;
      check(link, decodeShareLink(link));
    }
  });

  it('every payload in every key and value position decodes safely; as a key it is named', () => {
    for (const p of PAYLOADS) {
      for (const link of [`#v=1&seed=${p}`, `#v=1&lr=${p}`, `#v=1&focus=${p}`, `#v=1&hide=${p}`, `#v=1&methods=${p}`, `#v=1&lossAgg=${p}`]) {
        check(link, decodeShareLink(link));
      }
      for (const link of [`#v=1&${p}=1`, `#v=1&${encodeURIComponent(p.replace(/[\uD800-\uDFFF]/g, '?'))}=${p}`]) {
        const d = decodeShareLink(link);
        check(link, d);
        expect(d.errors.length, link).toBeGreaterThan(0);
      }
    }
    // Numbers are read strictly: no hex, blanks, infinities; -0 is 0.
    for (const v of ['0x10', ' 1', '1_000', 'Infinity', '1e309', 'NaN', '']) {
      expect(decodeShareLink(`#v=1&seed=${v}`).errors[0]?.key, v).toBe('seed');
    }
    expect(Object.is(decodeShareLink('#v=1&seed=-0').config.seed, 0)).toBe(true);
  });

  it('huge inputs are refused quickly', () => {
    const t0 = performance.now();
    for (const link of [
      `#v=1&seed=${'9'.repeat(MAX_LINK_CHARS * 10)}`,
      `#${'&'.repeat(MAX_LINK_CHARS)}`,
      `#${'seed=1&'.repeat(1000)}`,
      '#'.repeat(MAX_LINK_CHARS + 1),
      '😀'.repeat(MAX_LINK_CHARS),
    ]) {
      const d = decodeShareLink(link);
      check(link.slice(0, 40), d);
      expect(d.errors[0]!.key).toBe('link');
    }
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});
