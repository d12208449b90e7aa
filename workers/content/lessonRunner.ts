/**
 * Trains one lesson run on one seed, headless, and keeps what its claims read: the metric rows and,
 * where a claim reads it, the last iteration's batch dump. The lesson tests, `npm run -s
 * lessons:check` and the page bench use it; the page captures the same from its own runs
 * (app/lessons/lessonResults.ts).
 */
import { createCpuBackend } from '../core/cpuBackend';
import { dumpBatch } from '../formats/batchDump';
import { lessonRun, lessonRunConfig, needsDump, type Lesson, type RunResult } from './lessons';
import type { MetricRow } from '../core/metrics';
import { createTrainer, type BackendFactory } from '../core/trainer';

/**
 * `onIter` hears each iteration as it ends and is awaited: the worker's version yields there, so the
 * page's calls are served between iterations, and throws there to stop a seed the page wants its
 * worker back from.
 */
export async function trainLessonRun(
  lesson: Lesson,
  runId: string,
  seed: number,
  makeBackend: BackendFactory = createCpuBackend,
  onIter?: (iter: number) => void | Promise<void>,
): Promise<RunResult & { seconds: number }> {
  const t0 = Date.now();
  const run = lessonRun(lesson, runId);
  const t = await createTrainer(lessonRunConfig(run, seed), makeBackend);
  const rows: MetricRow[] = [];
  try {
    for (let i = 0; i < run.iters; i++) {
      rows.push(await t.step());
      await onIter?.(i + 1);
    }
    // The batch is read back only where a claim reads it.
    const dump = needsDump(lesson, runId) ? await dumpBatch(t) : null;
    return { rows, dump, seconds: (Date.now() - t0) / 1000 };
  } finally {
    t.destroy();
  }
}
