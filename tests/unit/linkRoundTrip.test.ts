/**
 * Property tests (seeded, so a failure reproduces) of the share link as the page uses it: whatever
 * state the page writes (config, backend, step, focus, hidden panels, lesson, presenter mode, a
 * Compare pair or an Arena) decodes to the same state with no problem; whatever link the decoder
 * accepts, the link the page then writes for it is accepted on reload and means the same; and an
 * arena over its budget is refused by its counts before any seed is expanded.
 */
import { describe, expect, it } from 'vitest';
import {
  ARENA_DIMENSIONS,
  ARENA_DIM_IDS,
  MAX_ARENA_ITERATIONS,
  MAX_ARENA_RUNS,
  arenaCells,
  checkArenaSpec,
  parseArenaSpec,
  type ArenaDimId,
  type ArenaSpec,
} from '../../workers/content/arena/dimensions';
import { LESSONS } from '../../workers/content/lessons';
import { allFields, defaultConfig, TASK_IDS, withField, type RunConfig } from '../../workers/core/config';
import { METHOD_IDS } from '../../workers/core/methods';
import type { ParamSpec, ParamValue } from '../../workers/core/methods/params';
import { createRng, type Rng } from '../../workers/core/rng';
import { PANEL_IDS } from '../../workers/formats/shareUrl';
import { decodeShareLink, encodeShareLink, type DecodedLink, type LinkExtras } from '../../workers/content/shareLink';

function pick<T>(rng: Rng, xs: readonly T[]): T {
  return xs[rng.int(xs.length)]!;
}

function randomValue(rng: Rng, spec: ParamSpec): ParamValue {
  switch (spec.kind) {
    case 'number':
      // Round numbers and long ones: both must survive the text form.
      return rng.next() < 0.5 ? spec.min + rng.next() * (spec.max - spec.min) : Math.min(spec.max, Math.max(spec.min, Number((spec.min + rng.next() * (spec.max - spec.min)).toPrecision(2))));
    case 'int':
      return spec.min + rng.int(Math.min(spec.max - spec.min + 1, 1000));
    case 'bool':
      return rng.next() < 0.5;
    case 'choice':
      return pick(rng, spec.options);
  }
}

const FIELDS = allFields();

function randomConfig(rng: Rng, p = 0.2): RunConfig {
  let cfg = defaultConfig();
  for (const [key, spec] of FIELDS) {
    if (rng.next() >= p) continue;
    try {
      cfg = withField(cfg, key, randomValue(rng, spec));
    } catch {
      // A value the config refuses in this combination (a method on another task): left at its default.
    }
  }
  return cfg;
}

/** Keys a level of some dimension sets: an arena's own `set` may not hold them. */
const LEVEL_KEYS = new Set(ARENA_DIMENSIONS.flatMap((d) => d.levels.flatMap((l) => Object.keys(l.set))));

/** A random arena within the budget, or null when the draw is not a valid arena. */
function randomArena(rng: Rng): ArenaSpec | null {
  const levels = {} as Record<ArenaDimId, string[]>;
  for (const d of ARENA_DIMENSIONS) {
    const ids = d.levels.map((l) => l.id).filter(() => rng.next() < 0.5);
    levels[d.id] = ids.length ? ids.sort(() => rng.next() - 0.5) : [pick(rng, d.levels).id];
  }
  const cells = ARENA_DIM_IDS.reduce((n, d) => n * levels[d].length, 1);
  const maxSeeds = Math.floor(MAX_ARENA_RUNS / cells);
  const want = 1 + rng.int(rng.next() < 0.2 ? maxSeeds : Math.min(maxSeeds, 40));
  const seeds = new Set<number>();
  let at = rng.int(1000);
  while (seeds.size < want) {
    const run = 1 + rng.int(Math.max(1, Math.min(want - seeds.size, rng.next() < 0.3 ? 5000 : 5)));
    for (let i = 0; i < run && seeds.size < want; i++) seeds.add(at++);
    at += rng.next() < 0.5 ? 0 : 1 + rng.int(50);
  }
  const runs = cells * seeds.size;
  const iters = 1 + rng.int(Math.max(1, Math.min(100_000, Math.floor(MAX_ARENA_ITERATIONS / runs))));
  const set: Record<string, string> = {};
  for (const [key, spec] of FIELDS) {
    if (key === 'task' || key === 'seed' || LEVEL_KEYS.has(key) || rng.next() > 0.03) continue;
    set[key] = String(randomValue(rng, spec));
  }
  if (rng.next() < 0.3) set.methods = [...new Set(Array.from({ length: 1 + rng.int(2) }, () => pick(rng, METHOD_IDS)))].join(',');
  const spec: ArenaSpec = { task: pick(rng, TASK_IDS), set, levels, seeds: [...seeds], iters };
  try {
    checkArenaSpec(spec);
    return spec;
  } catch {
    return null;
  }
}

/** What the page would write: the extras the store can hold at once (one view; presenter mode only in a lesson). */
function randomExtras(rng: Rng, config: RunConfig): LinkExtras {
  const extras: LinkExtras = {};
  if (rng.next() < 0.3) extras.backend = pick(rng, ['gpu', 'cpu'] as const);
  if (rng.next() < 0.3) extras.step = rng.int(100_001);
  if (rng.next() < 0.3) extras.focus = rng.next() < 0.5 ? { kind: 'group', index: rng.int(config.batch) } : { kind: 'traj', index: rng.int(config.batch * config.group) };
  if (rng.next() < 0.3) extras.hide = PANEL_IDS.filter(() => rng.next() < 0.3);
  if (rng.next() < 0.3) {
    const l = pick(rng, LESSONS);
    extras.lesson = { id: l.id, step: 1 + rng.int(l.steps.length) };
    if (rng.next() < 0.5) extras.present = true;
  }
  const view = rng.next();
  if (view < 0.3) extras.compare = { a: randomConfig(rng, 0.1), b: randomConfig(rng, 0.1) };
  else if (view < 0.6) {
    const arena = randomArena(rng);
    if (arena) extras.arena = arena;
  }
  return extras;
}

/** The state a decoded link puts on the page. */
function state(d: DecodedLink) {
  return {
    config: d.config,
    backend: d.backend ?? 'auto',
    step: d.step,
    focus: d.focus,
    hide: d.hide && d.hide.length > 0 ? d.hide : undefined,
    lesson: d.lesson,
    present: d.present === true,
    compare: d.compare,
    arena: d.arena,
  };
}

describe('links the page writes', () => {
  it('encode then decode is the identity over random configs, views, compare pairs and arenas', () => {
    const rng = createRng(0x11e);
    let arenas = 0;
    let compares = 0;
    for (let n = 0; n < 600; n++) {
      const config = randomConfig(rng);
      const extras = randomExtras(rng, config);
      arenas += extras.arena ? 1 : 0;
      compares += extras.compare ? 1 : 0;
      const link = encodeShareLink(config, extras);
      const d = decodeShareLink(link);
      expect(d.errors, link).toEqual([]);
      expect(state(d), link).toEqual(
        state({
          ...extras,
          hide: extras.hide ? [...new Set(extras.hide)] : undefined,
          config,
          errors: [],
          version: 1,
        }),
      );
    }
    // The draws reach both views often.
    expect(arenas).toBeGreaterThan(100);
    expect(compares).toBeGreaterThan(100);
  });

  it('every arena link the decoder accepts is written back as a link it accepts, with the same arena', () => {
    const rng = createRng(0xa7e);
    let accepted = 0;
    let refused = 0;
    for (let n = 0; n < 400; n++) {
      // Seeds written any way a person or an older page might: single seeds, short and long ranges, back to back or apart.
      const parts: string[] = [];
      let at = rng.int(100);
      for (let k = 1 + rng.int(5); k > 0; k--) {
        const len = rng.next() < 0.5 ? 1 : 1 + rng.int(rng.next() < 0.5 ? 12_000 : 20);
        parts.push(len === 1 ? `${at}` : `${at}-${at + len - 1}`);
        at += len + (rng.next() < 0.5 ? 0 : rng.int(30));
      }
      const dims = ARENA_DIMENSIONS.filter(() => rng.next() < 0.5).map((d) => `${d.id}=${d.levels.filter(() => rng.next() < 0.5).map((l) => l.id).join(',') || d.levels[0]!.id}`);
      const extra = rng.next() < 0.2 ? [`set.methods=${pick(rng, ['dapo', 'grpo=x', 'nope', 'cispo,dapo'])}`] : [];
      const text = [`task=${pick(rng, TASK_IDS)}`, `iters=${1 + rng.int(rng.next() < 0.2 ? 100_000 : 100)}`, `seeds=${parts.join(',')}`, ...dims, ...extra].join(';');
      const first = decodeShareLink(`#v=1&arena=${encodeURIComponent(text)}`);
      if (first.errors.length) {
        refused++;
        expect(first.arena, text).toBeUndefined();
        continue;
      }
      accepted++;
      // What the page writes for it (the address bar and Share use the same encoder).
      const written = encodeShareLink(first.config, { arena: first.arena });
      const again = decodeShareLink(written);
      expect(again.errors, `${text} -> ${written}`).toEqual([]);
      expect(again.arena, written).toEqual(first.arena);
    }
    expect(accepted).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(20);
  });
});

describe('arena links from before the rollout-correction dimension', () => {
  // Written by a page that had four dimensions: no correction= key.
  const OLD = [
    'task=search;iters=15;seeds=1-2;clip=token,cispo;filter=none;advantage=trajectory;aggregation=seq-mean-token-mean;set.batch=4;set.group=4;set.epochs=2',
    'task=search;iters=60;seeds=1-3;clip=token,cispo,sapo,sequence;filter=none,dynamic;advantage=trajectory,step,token;aggregation=token-mean,seq-mean-token-mean,seq-mean-token-sum,seq-mean-token-sum-norm;set.epochs=4;set.minibatches=2',
    'task=tools;clip=sapo;set.env.toolSteps=2',
  ];

  it('open as correction=none, with the cells, ids and labels they had, and are written back unchanged', () => {
    for (const text of OLD) {
      const d = decodeShareLink(`#v=1&arena=${text}`);
      expect(d.errors, text).toEqual([]);
      expect(d.arena!.levels.correction, text).toEqual(['none']);
      const cells = arenaCells(d.arena!);
      for (const c of cells.cells) expect(c.id.split('.'), c.id).toHaveLength(4);
      for (const c of [...cells.cells, ...cells.skipped]) expect(c.label, text).not.toContain('correction');
      // Read again from what this page writes: the same text, the same cells.
      const written = encodeShareLink(d.config, { arena: d.arena });
      if (text.startsWith('task=search;iters=')) expect(decodeURIComponent(written), text).toBe(`#v=1&arena=${text}`);
      const again = decodeShareLink(written);
      expect(again.arena, written).toEqual(d.arena);
      expect(arenaCells(again.arena!), written).toEqual(cells);
    }
    const first = arenaCells(decodeShareLink(`#v=1&arena=${OLD[0]}`).arena!).cells;
    expect(first.map((c) => [c.id, c.label])).toEqual([
      ['token.none.trajectory.seq-mean-token-mean', 'clip=token'],
      ['cispo.none.trajectory.seq-mean-token-mean', 'clip=cispo'],
    ]);
  });

  it('a link with corrections carries them, and one with a level that does not exist names it', () => {
    const text = `${OLD[0]!.replace(';set.', ';correction=none,tis,veto;set.')}`;
    const d = decodeShareLink(`#v=1&arena=${text}`);
    expect(d.errors).toEqual([]);
    expect(d.arena!.levels.correction).toEqual(['none', 'tis', 'veto']);
    expect(decodeURIComponent(encodeShareLink(d.config, { arena: d.arena }))).toBe(`#v=1&arena=${text}`);
    expect(arenaCells(d.arena!).cells.map((c) => c.id)).toEqual([
      'token.none.trajectory.seq-mean-token-mean', 'token.none.trajectory.seq-mean-token-mean.tis', 'token.none.trajectory.seq-mean-token-mean.veto',
      'cispo.none.trajectory.seq-mean-token-mean', 'cispo.none.trajectory.seq-mean-token-mean.tis', 'cispo.none.trajectory.seq-mean-token-mean.veto',
    ]);
    const bad = decodeShareLink('#v=1&seed=4&arena=correction=tis,mis');
    expect(bad.arena).toBeUndefined();
    expect(bad.errors.map((e) => [e.key, e.message])).toEqual([['arena', 'arena: unknown correction level "mis"; expected one of none, tis, seqis, tokenrs, seqrs, geors, veto']]);
    expect(bad.config.seed).toBe(4);
  });
});

describe('the arena budget', () => {
  it('is checked on the counts before any seed is expanded: 519 ranges of 10,001 seeds are refused at once, by name', () => {
    const ranges = Array.from({ length: 519 }, (_, i) => `${i * 10001}-${i * 10001 + 10000}`).join(',');
    const t0 = performance.now();
    const d = decodeShareLink(`#v=1&seed=3&arena=seeds=${ranges}`);
    const ms = performance.now() - t0;
    expect(ms).toBeLessThan(100);
    expect(d.arena).toBeUndefined();
    expect(d.config.seed).toBe(3);
    expect(d.errors).toHaveLength(1);
    expect(d.errors[0]!.key).toBe('arena');
    expect(d.errors[0]!.message).toBe('arena: 5,190,519 seeds x 1 cell = 5,190,519 runs; an arena holds at most 10,000 runs (seeds x cells)');
    // Two billion seeds in one range, and many levels over few seeds: refused the same way.
    expect(() => parseArenaSpec('seeds=0-2000000000')).toThrow(/2,000,000,001 seeds x 1 cell/);
    expect(() => parseArenaSpec('seeds=1-500;clip=token,cispo,sapo,sequence;advantage=trajectory,step,token;filter=none,dynamic')).toThrow(/500 seeds x 24 cells = 12,000 runs;/);
  });

  it('counts iterations too: runs x iterations past the budget are refused, naming the product', () => {
    expect(() => parseArenaSpec('seeds=1-100;iters=100000')).toThrow('arena: 100 seeds x 1 cell = 100 runs of 100,000 iterations = 10,000,000; an arena trains at most 1,000,000 iterations (seeds x cells x iterations)');
    expect(parseArenaSpec('seeds=1-10;iters=100000').seeds).toHaveLength(10);
  });

  it('the merge the page writes reads back: 1-10000,10001-10005 is refused by the budget, 1-3,4-6 and its merge 1-6 are the same arena', () => {
    expect(() => parseArenaSpec('seeds=1-10000,10001-10005')).toThrow(/10,005 seeds x 1 cell/);
    const split = decodeShareLink('#v=1&arena=seeds=1-5000,5001-10000');
    expect(split.errors).toEqual([]);
    const written = encodeShareLink(split.config, { arena: split.arena });
    expect(written).toContain('seeds=1-10000;');
    expect(decodeShareLink(written).arena).toEqual(split.arena);
  });
});

describe('notices name the part that is wrong', () => {
  const problems = (link: string) => decodeShareLink(link).errors.map((e) => `${e.key}: ${e.message}`);

  it('a known lesson with a bad step is a bad step, whatever its form', () => {
    const steps = LESSONS.find((l) => l.id === 'collapse')!.steps.length;
    for (const step of ['1000', '-1', '1.5', '8', '0', '', 'x', '99999999']) {
      expect(problems(`#v=1&lesson=collapse:${encodeURIComponent(step)}`), step).toEqual([`lesson: lesson collapse has steps 1 to ${steps}`]);
    }
    expect(problems('#v=1&lesson=nope:2')[0]).toMatch(/^lesson: unknown lesson; expected a lesson id/);
  });

  it('a key dropped because another view wins is named: compare under an arena, presenter mode without a lesson', () => {
    const d = decodeShareLink('#v=1&compare=seed:1|seed:2&arena=seeds%3D1-4');
    expect(d.arena?.seeds).toEqual([1, 2, 3, 4]);
    expect(d.compare).toBeUndefined();
    expect(d.errors.map((e) => e.key)).toEqual(['compare']);
    expect(d.errors[0]!.message).toMatch(/Arena view/);
    expect(decodeShareLink('#v=1&compare=seed:1|seed:2').errors).toEqual([]);
    const p = decodeShareLink('#v=1&present=1');
    expect(p.present).toBeUndefined();
    expect(p.errors.map((e) => e.key)).toEqual(['present']);
  });
});
