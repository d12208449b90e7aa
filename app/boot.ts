/**
 * The page's first module (app/main.tsx imports it before anything else): it starts the trainer
 * workers the page is about to ask for, its own and, on a lesson link, the lesson's seed workers
 * (app/lessons/seedPool.ts), so that each loads and compiles its script while the rest of the
 * bundle is evaluated instead of after it (app/trainerClient.ts hands them out).
 */
import { prespawnTrainers } from './trainerClient';
import { workersFor } from './lessons/workerCount';

/**
 * The lessons' seed count (workers/content/lessons.ts LESSON_SEEDS; no lesson sets its own), read
 * here without evaluating the lessons: the pool starts workers of its own if it needs more, and
 * prespawnTrainers ends those it does not take.
 */
export const BOOT_LESSON_SEEDS = 4;

if (typeof window !== 'undefined' && !new URLSearchParams(location.search).has('selftest')) {
  const lesson = /[#&]lesson=/.test(location.hash);
  prespawnTrainers(lesson ? workersFor(navigator.hardwareConcurrency, BOOT_LESSON_SEEDS) : 1);
}
