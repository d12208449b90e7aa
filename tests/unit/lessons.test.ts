/**
 * Lessons (workers/content/lessons.ts): every lesson's data is well formed, every step is a share link that
 * decodes to exactly its run, and the seeds are as documented. That every claim holds on the mean
 * over the lesson's seeds and over 4 held-out seeds is tests/unit/lessonClaims.*.test.ts;
 * `npm run -s lessons:check` runs the same checks in parallel processes, with each claim's slack.
 */
import { describe, expect, it } from 'vitest';
import { lessonStepHash } from '../../app/lessons/links';
import { EXTRA_CHART_IDS, lessonChartIds, stepCharts } from '../../app/lessons/charts';
import { presenterCss } from '../../app/lessons/presenter';
import { encodeShareLink, decodeShareLink } from '../../workers/content/shareLink';
import { PANEL_IDS } from '../../workers/formats/shareUrl';
import {
  describeClaim,
  DUMP_STATS,
  heldOutSeeds,
  isDumpStat,
  lessonById,
  lessonRun,
  lessonRunConfig,
  LESSONS,
  lessonSeeds,
  type Lesson,
  type Stat,
} from '../../workers/content/lessons';
import { methodRegistry } from '../../workers/core/methods';
import { SCALAR_METRICS } from '../../workers/core/metrics';

const stats = (l: Lesson): Stat[] => l.claims.flatMap((c) => [c.a, ...(typeof c.b === 'number' ? [] : [c.b])]);

describe('lesson data', () => {
  it('has unique ids, registered methods, known panels and charts, and steps that name runs and claims', () => {
    expect(new Set(LESSONS.map((l) => l.id)).size).toBe(LESSONS.length);
    expect(LESSONS.length).toBeGreaterThanOrEqual(7);
    const charts = new Set(lessonChartIds());
    for (const l of LESSONS) {
      expect(lessonById(l.id)).toBe(l);
      for (const m of l.methods) expect(Object.hasOwn(methodRegistry, m), `${l.id}: ${m}`).toBe(true);
      for (const p of l.hide) expect(PANEL_IDS, l.id).toContain(p);
      expect(l.hide, `${l.id}: presenter mode keeps the run controls and charts`).not.toContain('run');
      expect(l.hide).not.toContain('charts');
      for (const c of l.charts) expect(charts.has(c), `${l.id}: chart ${c}`).toBe(true);
      // The charts a step's text names, and those presenter mode shows beside it, exist.
      for (const s of l.steps) {
        for (const c of s.watch ?? []) expect(charts.has(c), `${l.id}: step watches chart ${c}`).toBe(true);
        const shown = stepCharts(l, s);
        expect(shown.length, `${l.id}: a step's charts`).toBeGreaterThan(0);
        for (const c of shown) expect(charts.has(c), `${l.id}: step chart ${c}`).toBe(true);
      }
      expect(new Set(l.runs.map((r) => r.id)).size).toBe(l.runs.length);
      expect(new Set(l.claims.map((c) => c.id)).size).toBe(l.claims.length);
      const claimIds = new Set(l.claims.map((c) => c.id));
      const used = new Set<string>();
      for (const s of l.steps) {
        lessonRun(l, s.run);
        expect(s.text.length).toBeGreaterThan(10);
        expect(s.see.length).toBeGreaterThan(10);
        expect(s.claims.length, `${l.id}: a step with no claim`).toBeGreaterThan(0);
        for (const c of s.claims) {
          expect(claimIds.has(c), `${l.id}: claim ${c}`).toBe(true);
          used.add(c);
          // A step's lines are about the run it loads (so they are measured once it has run).
          const claim = l.claims.find((x) => x.id === c)!;
          expect([claim.a, claim.b].some((x) => typeof x === 'object' && x.run === s.run), `${l.id}: ${c} is not about ${s.run}`).toBe(true);
        }
      }
      expect([...claimIds].filter((c) => !used.has(c)), `${l.id}: claims no step shows`).toEqual([]);
      for (const s of stats(l)) {
        lessonRun(l, s.run);
        if (isDumpStat(s)) expect(Object.hasOwn(DUMP_STATS, s.dump)).toBe(true);
        else expect(SCALAR_METRICS, `${l.id}: metric ${s.metric}`).toContain(s.metric);
      }
      for (const c of l.claims) expect((c.by === undefined) !== (c.times === undefined) || (c.by === undefined && c.times === undefined)).toBe(true);
      // Every run is a valid config (the validators throw otherwise) and differs from the others.
      const links = l.runs.map((r) => encodeShareLink(lessonRunConfig(r)));
      expect(new Set(links).size, `${l.id}: two runs with the same config`).toBe(l.runs.length);
    }
  });

  it('a step may watch the distribution charts, the sampler mismatch ones included; presenter mode keeps them by test id', () => {
    expect(lessonChartIds()).toEqual(expect.arrayContaining(['mismatch-hist', 'mismatch-heatmap', 'adv-heatmap']));
    const lesson = LESSONS[0]!;
    const step = { ...lesson.steps[0]!, watch: ['mismatch-heatmap', 'mismatch-hist'] };
    expect(stepCharts(lesson, step)).toEqual(['mismatch-heatmap', 'mismatch-hist']);
    // The panel's figures carry `chart-<id>` (tests/e2e/samplerViews.spec.ts finds each one there).
    const css = presenterCss(stepCharts(lesson, step));
    expect(css).toBe('.presenting .charts figure.chart:not([data-testid="chart-mismatch-heatmap"]):not([data-testid="chart-mismatch-hist"]) { display: none; }');
    for (const id of EXTRA_CHART_IDS) expect(presenterCss([id])).toContain(`[data-testid="chart-${id}"]`);
  });

  it('every step is a share link that decodes to its run, step count, lesson and presenter view', () => {
    for (const l of LESSONS) {
      l.steps.forEach((s, i) => {
        const run = lessonRun(l, s.run);
        const d = decodeShareLink(lessonStepHash(l, i));
        expect(d.errors, `${l.id} step ${i + 1}`).toEqual([]);
        expect(d.config).toEqual(lessonRunConfig(run));
        expect(d.step).toBe(run.iters);
        expect(d.lesson).toEqual({ id: l.id, step: i + 1 });
        expect(d.present).toBeUndefined();
        const p = decodeShareLink(lessonStepHash(l, i, { present: true }));
        expect(p.errors).toEqual([]);
        expect(p.present).toBe(true);
        expect(p.hide).toEqual(l.hide);
        expect(p.config).toEqual(d.config);
      });
    }
  });

  it('lesson and present keys: validated by name, and old links without them still decode', () => {
    const one = (link: string) => decodeShareLink(link).errors.map((e) => `${e.key}: ${e.message}`);
    expect(decodeShareLink('#v=1&lesson=collapse').lesson).toEqual({ id: 'collapse', step: 1 });
    expect(decodeShareLink('#v=1&lesson=turns:3').lesson).toEqual({ id: 'turns', step: 3 });
    expect(one('#v=1&lesson=nope')).toEqual([expect.stringMatching(/^lesson: unknown lesson; expected a lesson id \(collapse, /)]);
    expect(one('#v=1&lesson=turns:9')).toEqual(['lesson: lesson turns has steps 1 to 3']);
    expect(one('#v=1&lesson=turns:0')).toEqual(['lesson: lesson turns has steps 1 to 3']);
    expect(one('#v=1&lesson=__proto__')[0]).toMatch(/^lesson: expected a lesson id/);
    expect(one('#v=1&present=yes')).toEqual(['present: expected 1 or 0']);
    expect(decodeShareLink('#v=1&present=0').present).toBeUndefined();
    expect(decodeShareLink('#v=1&batch=4&seed=3').lesson).toBeUndefined();
    // The rest of a link with a bad lesson still applies.
    const d = decodeShareLink('#v=1&batch=4&lesson=zzz');
    expect(d.config.batch).toBe(4);
    expect(encodeShareLink(d.config, { lesson: { id: 'roles', step: 2 }, present: true })).toBe('#v=1&batch=4&lesson=roles:2&present=1');
  });

  it('describes every claim in words', () => {
    for (const l of LESSONS) for (const c of l.claims) expect(describeClaim(l, c)).toMatch(/[≥≤]/);
  });
});

describe('lesson seeds', () => {
  it('every lesson trains on at least 4 seeds; the held-out seeds are 4 others, the same on every call', () => {
    for (const l of LESSONS) {
      const own = lessonSeeds(l);
      expect(own.length, l.id).toBeGreaterThanOrEqual(4);
      const held = heldOutSeeds(l);
      expect(held).toHaveLength(4);
      expect(new Set(held).size).toBe(4);
      for (const s of held) expect(own, l.id).not.toContain(s);
      expect(heldOutSeeds(l)).toEqual(held);
    }
  });
});
