/**
 * A lesson step's numbers come from that step's own runs only. After Next the page holds the new
 * step's config at once while its rows are still the previous step's run (both lesson runs here
 * have 6 iterations, so those rows look complete); the capture must wait for the rows of the new
 * config. Every result recorded for the seed on screen must equal the same run trained headless
 * (workers/content/lessonRunner.ts, what `npm run -s lessons:check` trains). The "worker" is the
 * real trainer API in this process (tests/helpers/inProcessTrainer.ts).
 */
import { describe, expect, it, vi } from 'vitest';
import { lessonById, type RunResult } from '../../workers/content/lessons';
import { trainLessonRun } from '../../workers/content/lessonRunner';
import type { MetricRow } from '../../workers/core/metrics';
import { decodeShareLink } from '../../workers/content/shareLink';
import { createTrainerApi } from '../../workers/entry/trainerApi';

vi.mock('../../app/trainerClient', () => import('../helpers/inProcessTrainer'));

/** The fields the claims read: wall time differs from run to run. */
const comparable = (rows: readonly MetricRow[]) => rows.map((r) => ({ ...r, ms: 0 }));

async function until(check: () => boolean, timeout = 60_000): Promise<void> {
  const end = Date.now() + timeout;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the lesson capture', () => {
  it('after Next, the new step is recorded only from its own run, as lessons:check trains it', async () => {
    const lesson = lessonById('length')!;
    const [first, second] = lesson.steps as [(typeof lesson.steps)[0], (typeof lesson.steps)[0]];
    expect(first.run).not.toBe(second.run);
    const { lessonStepHash } = await import('../../app/lessons/links');
    const { useAppStore } = await import('../../app/store');
    const { useLessonResults, watchLessonCapture } = await import('../../app/lessons/lessonResults');

    // Step 1 as its link opens it: the run trains to its iteration count and is recorded.
    useAppStore.getState().applyLink(decodeShareLink(lessonStepHash(lesson, 0)), true);
    const seed = useAppStore.getState().config.seed;
    const stop = watchLessonCapture();
    useAppStore.getState().init();
    const recorded = (run: string) => useLessonResults.getState().results[lesson.id]?.[run]?.[seed];
    await until(() => recorded(first.run)?.dump != null);

    // Every record from here on, as it is made.
    const records: Array<{ run: string; r: RunResult }> = [];
    const unsub = useLessonResults.subscribe((s, prev) => {
      for (const run of [first.run, second.run]) {
        const r = s.results[lesson.id]?.[run]?.[seed];
        if (r && r !== prev.results[lesson.id]?.[run]?.[seed]) records.push({ run, r });
      }
    });
    // Next: the panel opens step 2 and applies its link.
    useAppStore.getState().openLesson({ id: lesson.id, step: 2 });
    useAppStore.getState().applyLink(decodeShareLink(lessonStepHash(lesson, 1)), false);
    await until(() => recorded(second.run)?.dump != null);
    unsub();
    stop();

    const expected = await trainLessonRun(lesson, second.run, seed);
    const mine = records.filter((x) => x.run === second.run);
    expect(mine.length).toBeGreaterThan(0);
    for (const { r } of mine) expect(comparable(r.rows)).toEqual(comparable(expected.rows));
    expect(recorded(second.run)!.dump!.trajs.length).toBe(expected.dump!.trajs.length);
    // Step 1's record was not touched by step 2's run.
    expect(records.filter((x) => x.run === first.run)).toEqual([]);
  }, 120_000);

  it('a seed the page trains beside its run is the headless run, and stops when the page takes its worker back', async () => {
    const lesson = lessonById('collapse')!;
    const api = createTrainerApi(undefined);
    const iters: number[] = [];
    const whole = await api.trainLessonSeed(lesson.id, 'grpo', 2, (i) => iters.push(i));
    expect(comparable(whole.rows)).toEqual(comparable((await trainLessonRun(lesson, 'grpo', 2)).rows));
    // Progress came between iterations, in order.
    expect(iters.length).toBeGreaterThan(0);
    expect(iters).toEqual([...iters].sort((a, b) => a - b));
    const stopped = api.trainLessonSeed(lesson.id, 'igpo', 2);
    await new Promise((r) => setTimeout(r, 50));
    await api.stopLessonSeeds();
    await expect(stopped).rejects.toThrow('lesson seed stopped');
  }, 120_000);
});
