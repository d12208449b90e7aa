/**
 * Why each method exists (workers/content/why.ts) and `npm run -s why` (cli/why.ts): the table's
 * integrity, the rows' verdict rule, the flags, bad input, one run trained in process, and the CLI's
 * JSON from cached runs (no training in a child: each test takes seconds).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cacheFile, trainOne, type JobResult } from '../../cli/why';
import { parseWhyArgs } from '../../cli/whyArgs';
import { runCli } from '../helpers/cliNode';
import { rowHolds, statKey, whyRow, type WhyRunResult } from '../../cli/whySummary';
import { checkClaimOnSeeds, lessonRunConfig, type RunResult } from '../../workers/content/lessons';
import { heldOutFromCommit, scaledStat, WHY, WHY_ROUNDS, WHY_RUN_IDS, whyCorrectionIds, whyHeldOut, whyIds, whyLesson, whyOf, whyRunSet, type WhyRegime } from '../../workers/content/why';
import { WHY_CORRECTIONS } from '../../workers/content/whyCorrections';
import { ROLLOUT_CORRECTION_METHODS } from '../../workers/core/methods/rolloutCorrections';
import { SCALAR_METRICS, type MetricRow } from '../../workers/core/metrics';

/** The paper methods (every method but the baselines GRPO, PPO and RLOO). */
const PAPER_METHODS = ['drgrpo', 'dapo', 'gspo', 'reinforcepp', 'igpo', 'cm2', 'edge', 'regft', 'pfppo', 'zerosearch', 'dars', 'seeupo', 'sampo', 'vcpo', 'prorl', 'gmpo', 'otb', 'drmas', 'cispo', 'sapo', 'gigpo', 'dynfilter'];

describe('the regime table', () => {
  it('every paper method has a regime; each run builds a valid config; windows fit the budget; margins are positive', () => {
    expect([...whyIds()].sort()).toEqual([...PAPER_METHODS].sort());
    // The rollout corrections have their own table, all of them in round three's one regime.
    expect([...whyCorrectionIds()].sort()).toEqual(Object.keys(ROLLOUT_CORRECTION_METHODS).sort());
    for (const r of Object.values(WHY_CORRECTIONS)) {
      expect(r.round, r.method).toBe(3);
      expect(whyOf(r.method), r.method).toBe(r);
      expect(whyRunSet(r, 'sick'), r.method).toEqual({ ...whyRunSet(r, 'healthy'), staleness: '8' });
    }
    for (const r of [...Object.values(WHY), ...Object.values(WHY_CORRECTIONS)] as WhyRegime[]) {
      for (const run of WHY_RUN_IDS) expect(() => lessonRunConfig({ id: run, label: run, set: whyRunSet(r, run), iters: r.iters }, 1), `${r.method} ${run}`).not.toThrow();
      expect(lessonRunConfig({ id: 'cure', label: '', set: whyRunSet(r, 'cure'), iters: 1 }).methods, r.method).toContain(r.method);
      expect(lessonRunConfig({ id: 'sick', label: '', set: whyRunSet(r, 'sick'), iters: 1 }).methods, r.method).toEqual([r.baseline]);
      for (const row of [r.disease, r.cureRow]) {
        expect(row.margin, r.method).toBeGreaterThan(0);
        expect(row.stat.from, r.method).toBeGreaterThanOrEqual(1);
        expect(row.stat.to, r.method).toBeLessThanOrEqual(r.iters);
        expect(row.stat.from, r.method).toBeLessThanOrEqual(row.stat.to);
      }
      // A method with no disease on the toys says what was tried.
      if (!r.found) expect(r.tried?.length ?? 0, r.method).toBeGreaterThan(40);
      // The healthy and diseased baselines differ, and only in the regime's knobs.
      expect(whyRunSet(r, 'healthy'), r.method).not.toEqual(whyRunSet(r, 'sick'));
    }
  });

  it('each round\'s held-out seeds are the draw from its commit\'s hash, apart from seeds 1-8 and every development seed', () => {
    expect(heldOutFromCommit('39e847b8d8f0daae5c15b503fd485210a650c7b7')).toEqual([40188, 12072, 96538, 51077, 49439, 79482, 69197, 52127]);
    expect(() => heldOutFromCommit('39e847b')).toThrow(/40 hex digits/);
    const dev: number[] = Object.values(WHY_ROUNDS).flatMap((r) => [...r.devSeeds]);
    for (const round of Object.values(WHY_ROUNDS)) {
      if (round.commit === null) {
        expect(round.heldOut).toEqual([]);
        continue;
      }
      expect(round.heldOut).toEqual(heldOutFromCommit(round.commit));
      for (const s of round.heldOut) expect(s > 8 && !dev.includes(s), String(s)).toBe(true);
    }
    expect(whyHeldOut(whyOf('cm2')!)).toEqual(WHY_ROUNDS[1].heldOut);
    expect(whyHeldOut(whyOf('vcpo')!)).toEqual(WHY_ROUNDS[2].heldOut);
  });

  it('a window keeps its share of a shortened run', () => {
    const s = { metric: 'success_rate' as const, agg: 'mean' as const, from: 61, to: 100 };
    expect(scaledStat(s, 100, 100)).toBe(s);
    expect(scaledStat(s, 100, 10)).toEqual({ ...s, from: 6, to: 10 });
    expect(scaledStat({ ...s, from: 1, to: 20 }, 100, 3)).toEqual({ ...s, from: 1, to: 1 });
  });
});

/** Metric rows whose `metric` is `value` at every iteration. */
const rows = (iters: number, metric: keyof MetricRow, value: number): MetricRow[] =>
  Array.from({ length: iters }, (_, i) => ({ iter: i + 1, [metric]: value }) as unknown as MetricRow);

describe('the rows', () => {
  const r = whyOf('cm2')!;
  const result = (run: WhyRunResult['run'], seed: number, sick: number, succ: number): WhyRunResult => ({
    run,
    seed,
    values: { [statKey(r.disease.stat)]: sick, [statKey(r.cureRow.stat)]: succ },
    crashed: false,
    crashWhy: null,
    seconds: 0,
  });

  it('a row holds past its margin with the interval clear of 0; not at the margin\'s wrong side, not with an interval across 0', () => {
    const res = [1, 2, 3].flatMap((seed) => [result('healthy', seed, 0.5, 0.9), result('sick', seed, 0.95 + seed / 100, 0), result('cure', seed, 0.4, 0.8 + seed / 100)]);
    const d = whyRow(r, 'disease', res, [1, 2, 3], r.iters);
    expect(d.a.run).toBe('sick');
    expect(d.b.run).toBe('healthy');
    expect(d.diff.mean).toBeCloseTo(0.47, 10);
    expect(d.diff.lo!).toBeGreaterThan(0);
    expect(d.holds).toBe(true);
    const c = whyRow(r, 'cure', res, [1, 2, 3], r.iters);
    expect(c.a.run).toBe('cure');
    expect(c.holds).toBe(true);
    // Past the margin on the mean but the interval spans 0: no.
    expect(rowHolds({ n: 3, mean: 0.5, lo: -0.1, hi: 1.1 }, 0.5, 1, 0.4)).toBe(false);
    // Clear of 0 but short of the margin: no.
    expect(rowHolds({ n: 3, mean: 0.3, lo: 0.2, hi: 0.4 }, 0.3, 1, 0.4)).toBe(false);
    // The other direction.
    expect(rowHolds({ n: 3, mean: -0.3, lo: -0.4, hi: -0.2 }, -0.3, -1, 0.1)).toBe(true);
    expect(rowHolds({ n: 3, mean: -0.3, lo: -0.4, hi: -0.2 }, -0.3, 1, 0.1)).toBe(false);
    // One seed: the mean against the margin, no interval.
    expect(rowHolds(null, 0.5, 1, 0.4)).toBe(true);
    const one = whyRow(r, 'disease', res, [2], r.iters);
    expect(one.diff).toMatchObject({ n: 1, lo: null, hi: null });
    // A missing run is no verdict.
    expect(whyRow(r, 'cure', res.filter((x) => x.run !== 'cure'), [1, 2, 3], r.iters).holds).toBe(false);
  });

  it('the regime as a lesson: three runs, the two rows as claims, checked on the mean over seeds', () => {
    const lesson = whyLesson(r, [1, 2]);
    expect(lesson.runs.map((x) => x.id)).toEqual(['healthy', 'sick', 'cure']);
    expect(lesson.steps.map((x) => x.run)).toEqual(['sick', 'cure']);
    expect(lesson.seeds).toEqual([1, 2]);
    const claim = lesson.claims.find((c) => c.id === 'disease')!;
    const seed = (healthy: number, sick: number): Record<string, RunResult> => ({
      healthy: { rows: rows(r.iters, 'groups_all_equal_frac', healthy), dump: null },
      sick: { rows: rows(r.iters, 'groups_all_equal_frac', sick), dump: null },
    });
    expect(checkClaimOnSeeds(lesson, claim, [seed(0.5, 1), seed(0.5, 0.9)]).ok).toBe(true);
    expect(checkClaimOnSeeds(lesson, claim, [seed(0.5, 0.6), seed(0.5, 0.9)]).ok).toBe(false);
  });
});

describe('npm run -s why', () => {
  it('flags: defaults, seeds, jobs, json, iters; bad input names the flag', () => {
    expect(parseWhyArgs(['--method', 'cm2'])).toMatchObject({ method: 'cm2', seeds: [1, 2, 3, 4, 5, 6, 7, 8], jobs: 2, json: false, iters: null });
    expect(parseWhyArgs(['--method=edge', '--seeds', '3,5-6', '--jobs', '1', '--json', '--iters', '9'])).toMatchObject({ method: 'edge', seeds: [3, 5, 6], jobs: 1, json: true, iters: 9 });
    // held-out: the method's round's seeds, whichever flag comes first.
    expect(parseWhyArgs(['--seeds', 'held-out', '--method', 'cm2']).seeds).toEqual([...WHY_ROUNDS[1].heldOut]);
    expect(parseWhyArgs(['--method', 'vcpo', '--seeds', 'held-out']).seeds).toEqual([...WHY_ROUNDS[2].heldOut]);
    const cases: Array<[string[], RegExp]> = [
      [[], /--method: expected one of/],
      [['--method', 'nope'], /--method nope: unknown method; expected one of .*cm2/],
      [['--method', 'grpo'], /GRPO is a baseline, not a paper method/],
      [['--method', 'cm2', '--seeds', 'x'], /--seeds: expected seeds and ranges/],
      [['--method', 'cm2', '--seeds', '5-2'], /--seeds: bad range "5-2"/],
      [['--method', 'cm2', '--seeds', '1,1'], /listed twice/],
      [['--method', 'cm2', '--jobs', '0'], /--jobs 0: expected a whole number in 1..64/],
      [['--method', 'cm2', '--iters', '1.5'], /--iters 1.5: expected a whole number/],
      [['--method', 'cm2', '--bogus'], /--bogus: unknown flag/],
      [['--method'], /--method: expected a value/],
    ];
    for (const [args, msg] of cases) expect(() => parseWhyArgs(args), args.join(' ')).toThrow(msg);
  });

  const run = (...args: string[]) => runCli('cli/why.ts', args);

  it('bad input exits 2 with one line on stderr and nothing on stdout', () => {
    const r = run('--method', 'nope\u001b[2J');
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    // The echoed input is escaped: no control character reaches the terminal.
    expect(r.stderr).toMatch(/^error: --method nope\\x1b\[2J: unknown method; expected one of [a-z0-9, ]+, or a rollout correction: [a-z0-9, ]+\n$/);
  }, 120_000);

  it('one run trains in process and keeps a scalar row per iteration', async () => {
    const res = await trainOne({ set: whyRunSet(whyOf('prorl')!, 'sick'), seed: 1, iters: 2 });
    expect(res.rows.map((r) => r.iter)).toEqual([1, 2]);
    expect(res.nonFiniteAt).toBeNull();
    expect(Number.isFinite(res.rows[1]!.success_rate)).toBe(true);
  });

  it('--json on 2 seeds prints one object with both rows, their numbers and verdicts (runs read from --cache)', () => {
    // The runs come from the cache, so the test times the CLI's path from rows to verdicts, not
    // training: each run's success rises to `end` over 3 iterations and its all-equal fraction is `eq`.
    const r = whyOf('cm2')!;
    const dir = mkdtempSync(join(tmpdir(), 'why-'));
    const fake = (eq: number, end: number): JobResult => ({
      rows: [1, 2, 3].map((iter) => ({ ...Object.fromEntries(SCALAR_METRICS.map((m) => [m, 0])), iter, groups_all_equal_frac: eq, success_rate: (end * iter) / 3 }) as JobResult['rows'][number]),
      nonFiniteAt: null,
      seconds: 0,
    });
    const want: Record<string, [number, number]> = { healthy: [0.4, 0.9], sick: [0.95, 0.1], cure: [0.3, 0.95] };
    for (const run of WHY_RUN_IDS)
      for (const seed of [1, 2]) {
        const [eq, end] = want[run]!;
        writeFileSync(cacheFile(dir, { set: whyRunSet(r, run), seed, iters: 3 }), JSON.stringify(fake(eq + seed / 100, end)));
      }
    try {
      const p = run('--method', 'cm2', '--seeds', '1-2', '--iters', '3', '--json', '--cache', dir);
      expect(p.status, p.stderr).toBe(0);
      const out = JSON.parse(p.stdout);
      expect(out).toMatchObject({ method: 'cm2', iters: 3, seeds: [1, 2], found: true, crashes: { healthy: 0, sick: 0, cure: 0 } });
      expect(out.runs.cure.methods).toBe('cm2');
      expect(out.disease.a.run).toBe('sick');
      expect(out.disease.diff.mean).toBeCloseTo(0.55, 10);
      expect(out.disease.holds).toBe(true);
      expect(out.cure.a.run).toBe('cure');
      for (const row of [out.disease, out.cure]) {
        expect(typeof row.holds).toBe('boolean');
        expect(row.diff.n).toBe(2);
        expect(row.a.perSeed).toHaveLength(2);
        expect(row.diff.lo).toBeLessThanOrEqual(row.diff.mean);
        expect(row.diff.mean).toBeCloseTo(row.a.mean - row.b.mean, 10);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
