/**
 * The claim check the lesson tests share (tests/unit/lessonClaims*.lesson.test.ts): every run of a
 * lesson on every seed, headless on the CPU backend, then every claim on the mean over the seeds.
 */
import { expect } from 'vitest';
import {
  checkClaimOnSeeds,
  describeClaim,
  lessonRun,
  LESSONS,
  statValue,
  type Lesson,
  type SeedResults,
  type Stat,
} from '../../workers/content/lessons';
import { trainLessonRun } from '../../workers/content/lessonRunner';

/**
 * The lessons of the first of the two test files; the second has the others, a lesson added later
 * among them. Two files of about equal time (measured: collapse 54 s, turns 4, length 3, roles 9,
 * crash 9; sampler 34, ratios 20, entropy 14, reward 11) let two workers check them side by side,
 * where one file of 157 s was the unit suite's last to finish.
 */
const FIRST_FILE = new Set(['collapse', 'turns', 'length', 'roles', 'crash']);

/** The lessons test file 1 or 2 checks. */
export function lessonsOfFile(file: 1 | 2): Lesson[] {
  return LESSONS.filter((l) => FIRST_FILE.has(l.id) === (file === 1));
}

const stats = (l: Lesson): Stat[] => l.claims.flatMap((c) => [c.a, ...(typeof c.b === 'number' ? [] : [c.b])]);

const fmt = (x: number) => (Number.isFinite(x) ? (Math.abs(x) >= 10 ? x.toFixed(1) : x.toPrecision(3)) : String(x));

/** Every run of the lesson on every seed, then every claim on the mean over the seeds. */
export async function checkOnSeeds(l: Lesson, seeds: readonly number[], label: string): Promise<void> {
  const bySeed: SeedResults[] = [];
  const timing: string[] = [];
  for (const seed of seeds) {
    const results: Record<string, Awaited<ReturnType<typeof trainLessonRun>>> = {};
    for (const r of l.runs) results[r.id] = await trainLessonRun(l, r.id, seed);
    timing.push(`seed ${seed} ${Object.values(results).reduce((a, r) => a + r.seconds, 0).toFixed(0)} s`);
    bySeed.push(results);
  }
  // The statistics are what the panel shows too: each is a number on most seeds (a statistic of the
  // last batch can be undefined on one, e.g. no clipped trajectory to split).
  for (const s of stats(l)) {
    const defined = bySeed.filter((r) => Number.isFinite(statValue(s, r[s.run]!, lessonRun(l, s.run).iters))).length;
    expect(2 * defined, `${JSON.stringify(s)} is a number on ${defined} of ${seeds.length} seeds`).toBeGreaterThanOrEqual(seeds.length);
  }
  const lines = l.claims.map((c) => {
    const k = checkClaimOnSeeds(l, c, bySeed);
    return { c, k, line: `${k.ok ? 'ok  ' : 'FAIL'} ${c.id}: a=${fmt(k.a)} b=${fmt(k.b)}  (${describeClaim(l, c)})` };
  });
  console.log(`lesson ${l.id}, ${label} seeds ${seeds.join(', ')} (${timing.join(', ')})\n${lines.map((x) => '  ' + x.line).join('\n')}`);
  for (const { c, k } of lines) expect(k.ok, `${l.id}/${c.id} (${label} seeds): a=${k.a} b=${k.b}: ${describeClaim(l, c)}`).toBe(true);
}

