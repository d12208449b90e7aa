/**
 * The page's lessons over seeds (app/lessons/seedStats.ts, app/charts/scale.ts rangePath): how many
 * workers train the seeds, the mean and min-max band a step's chart draws, and the band's outline.
 */
import { describe, expect, it } from 'vitest';
import { rangePath } from '../../app/charts/scale';
import { seedBands, workersFor } from '../../app/lessons/seedStats';
import { LESSONS, lessonSeeds, type RunResult } from '../../workers/content/lessons';
import type { MetricRow } from '../../workers/core/metrics';

describe('workersFor', () => {
  it('one worker per core, the page’s own counted, at least 1, never more than the seeds', () => {
    expect(workersFor(2, 4)).toBe(2);
    expect(workersFor(16, 4)).toBe(4);
    expect(workersFor(1, 4)).toBe(1);
    expect(workersFor(undefined, 4)).toBe(1);
    expect(workersFor(0, 4)).toBe(1);
    expect(workersFor(NaN, 4)).toBe(1);
    expect(workersFor(3.7, 4)).toBe(3);
  });
});

describe('seedBands', () => {
  const lesson = LESSONS.find((l) => l.id === 'turns')!;
  const run = lesson.steps[0]!.run;
  const iters = lesson.runs.find((r) => r.id === run)!.iters;
  const result = (k: number): RunResult => ({ rows: Array.from({ length: iters }, (_, i) => ({ iter: i + 1, reward_mean: k * (i + 1) }) as unknown as MetricRow), dump: null });

  it('is the mean with the lowest and highest seed per iteration', () => {
    const seeds = lessonSeeds(lesson);
    const byRun = { [run]: Object.fromEntries(seeds.map((s, i) => [s, result(i + 1)])) };
    const rows = seedBands(lesson, byRun, [run], 'reward_mean');
    expect(rows).toHaveLength(iters);
    const n = seeds.length;
    const mean = (n + 1) / 2;
    expect(rows[2]![run]).toBeCloseTo(mean * 3, 12);
    expect(rows[2]![`${run}_lo`]).toBe(3);
    expect(rows[2]![`${run}_hi`]).toBe(n * 3);
  });

  it('skips non-finite values and leaves an iteration no seed reached empty', () => {
    const nan: RunResult = { rows: [{ iter: 1, reward_mean: NaN } as unknown as MetricRow], dump: null };
    const rows = seedBands(lesson, { [run]: { 1: nan, 2: result(2) } }, [run], 'reward_mean');
    expect(rows[0]![run]).toBe(2);
    expect(rows[0]![`${run}_lo`]).toBe(2);
    const none = seedBands(lesson, { [run]: { 1: nan } }, [run], 'reward_mean');
    expect(none[0]).toEqual({ iter: 1 });
  });
});

describe('rangePath', () => {
  const id = (v: number) => v;
  it('goes along the high values and back along the low ones, closed', () => {
    const rows = [
      { x: 0, lo: 1, hi: 3 },
      { x: 1, lo: 2, hi: 5 },
    ];
    expect(rangePath(rows, 'x', 'lo', 'hi', id, id)).toBe('M0,3L1,5L1,2L0,1Z');
  });
  it('is empty with fewer than two finite rows', () => {
    expect(rangePath([{ x: 0, lo: 1, hi: 2 }, { x: 1, lo: NaN, hi: 2 }], 'x', 'lo', 'hi', id, id)).toBe('');
    expect(rangePath([], 'x', 'lo', 'hi', id, id)).toBe('');
  });
});
