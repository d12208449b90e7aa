/**
 * How far a lesson step's measurement has come: for each run its lines compare, each lesson seed is
 * done, training on screen, training in a seed worker (with its iteration), queued or waiting. The
 * panel shows it while the seeds train, so a class sees progress instead of the run on screen's
 * "paused" while the other seeds are still at work.
 */
import { lessonRun, lessonSeeds, type Lesson, type LessonStep, type RunResult } from '../../workers/meta';
import { runsOf } from './lessonResults';

export type SeedStage = 'done' | 'on-screen' | 'training' | 'queued' | 'waiting';

export interface SeedProgress {
  seed: number;
  stage: SeedStage;
  /** Iterations done (the run's count when done). */
  iter: number;
}

export interface RunProgress {
  runId: string;
  label: string;
  iters: number;
  seeds: SeedProgress[];
  done: number;
}

/** What the pool and the page are doing now. */
export interface ProgressInputs {
  byRun: Readonly<Record<string, Readonly<Record<number, RunResult>>>> | undefined;
  training: ReadonlyArray<{ runId: string; seed: number; iter: number }>;
  queued: ReadonlyArray<{ runId: string; seed: number }>;
  /** The lesson run on screen and its seed and last iteration, or null. */
  onScreen: { runId: string; seed: number; iter: number } | null;
}

/** The runs a step's lines read, its own first. */
export function stepRuns(lesson: Lesson, step: LessonStep): string[] {
  const stats = step.claims.flatMap((id) => {
    const c = lesson.claims.find((x) => x.id === id);
    return c ? [c.a, c.b] : [];
  });
  return [...new Set([step.run, ...runsOf(stats)])];
}

export function stepProgress(lesson: Lesson, step: LessonStep, p: ProgressInputs): RunProgress[] {
  return stepRuns(lesson, step).map((runId) => {
    const run = lessonRun(lesson, runId);
    const seeds = lessonSeeds(lesson).map((seed): SeedProgress => {
      if (p.byRun?.[runId]?.[seed] !== undefined) return { seed, stage: 'done', iter: run.iters };
      if (p.onScreen && p.onScreen.runId === runId && p.onScreen.seed === seed) return { seed, stage: 'on-screen', iter: Math.min(p.onScreen.iter, run.iters) };
      const t = p.training.find((x) => x.runId === runId && x.seed === seed);
      if (t) return { seed, stage: 'training', iter: t.iter };
      if (p.queued.some((x) => x.runId === runId && x.seed === seed)) return { seed, stage: 'queued', iter: 0 };
      return { seed, stage: 'waiting', iter: 0 };
    });
    return { runId, label: run.label, iters: run.iters, seeds, done: seeds.filter((s) => s.stage === 'done').length };
  });
}

/** Iterations done over iterations needed, over every seed of every run: the progress bar. */
export function progressFraction(runs: readonly RunProgress[]): number {
  let done = 0;
  let all = 0;
  for (const r of runs) {
    for (const s of r.seeds) done += s.iter;
    all += r.iters * r.seeds.length;
  }
  return all > 0 ? done / all : 1;
}

/** One line per run, e.g. "GRPO: 1 of 4 seeds done · seed 1 on screen, iteration 12 of 30 · seeds 3, 4 queued". */
export function progressText(r: RunProgress): string {
  const n = r.seeds.length;
  if (r.done === n) return `${r.label}: all ${n} seeds done`;
  const parts = [`${r.label}: ${r.done} of ${n} seeds done`];
  for (const s of r.seeds) {
    if (s.stage === 'on-screen') parts.push(`seed ${s.seed} on screen, iteration ${s.iter} of ${r.iters}`);
    if (s.stage === 'training') parts.push(`seed ${s.seed} iteration ${s.iter} of ${r.iters}`);
  }
  const queued = r.seeds.filter((s) => s.stage === 'queued').map((s) => s.seed);
  if (queued.length) parts.push(`${queued.length > 1 ? 'seeds' : 'seed'} ${queued.join(', ')} queued`);
  const waiting = r.seeds.filter((s) => s.stage === 'waiting').map((s) => s.seed);
  if (waiting.length) parts.push(`${waiting.length > 1 ? 'seeds' : 'seed'} ${waiting.join(', ')} not started`);
  return parts.join(' · ');
}
