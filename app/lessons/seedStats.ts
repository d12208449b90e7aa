/** Pure helpers of the page's lessons over seeds: the worker count and the mean-and-band series. */
import { lessonRun, lessonSeeds, type Lesson, type RunResult } from '../../workers/meta';
import type { ScalarMetric } from '../../workers/core/metrics';

/** Workers in all, the page's own one included: one per core, at least 1. */
export function workersFor(cores: number | undefined, seeds: number): number {
  const c = Number.isFinite(cores) && cores! >= 1 ? Math.floor(cores!) : 1;
  return Math.max(1, Math.min(c, seeds));
}

/** Per iteration: `<run>` (mean over seeds), `<run>_lo` and `<run>_hi` (min and max over seeds). */
export function seedBands(lesson: Lesson, byRun: Readonly<Record<string, Readonly<Record<number, RunResult>>>>, runs: readonly string[], metric: ScalarMetric): Array<Record<string, number>> {
  const seeds = lessonSeeds(lesson);
  const iters = Math.max(0, ...runs.map((r) => lessonRun(lesson, r).iters));
  const rows: Array<Record<string, number>> = [];
  for (let iter = 1; iter <= iters; iter++) {
    const row: Record<string, number> = { iter };
    for (const run of runs) {
      const xs = seeds.map((seed) => byRun[run]?.[seed]?.rows.find((r) => r.iter === iter)?.[metric]).filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
      if (xs.length === 0) continue;
      row[run] = xs.reduce((a, b) => a + b, 0) / xs.length;
      row[`${run}_lo`] = xs.reduce((a, b) => Math.min(a, b), Infinity);
      row[`${run}_hi`] = xs.reduce((a, b) => Math.max(a, b), -Infinity);
    }
    rows.push(row);
  }
  return rows;
}

