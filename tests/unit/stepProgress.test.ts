/** A lesson step's progress line: each seed's stage and iteration, and the share of the work done. */
import { describe, expect, it } from 'vitest';
import { progressFraction, progressText, stepProgress, stepRuns } from '../../app/lessons/stepProgress';
import { lessonById, type RunResult } from '../../workers/content/lessons';

const lesson = lessonById('collapse')!;
const step2 = lesson.steps[1]!;
const done = { rows: [], dump: null } as unknown as RunResult;

describe('a lesson step’s progress', () => {
  it('reads the step’s own run first, then the runs its lines compare', () => {
    expect(stepRuns(lesson, step2)).toEqual(['igpo', 'grpo']);
  });

  it('says which seed is on screen, which train beside it and which wait, with their iterations', () => {
    const runs = stepProgress(lesson, step2, {
      byRun: { grpo: { 1: done, 2: done, 3: done, 4: done } },
      training: [{ runId: 'igpo', seed: 2, iter: 12 }],
      queued: [{ runId: 'igpo', seed: 3 }],
      onScreen: { runId: 'igpo', seed: 1, iter: 30 },
    });
    expect(runs.map((r) => r.done)).toEqual([0, 4]);
    expect(runs[0]!.seeds.map((s) => [s.seed, s.stage, s.iter])).toEqual([
      [1, 'on-screen', 30],
      [2, 'training', 12],
      [3, 'queued', 0],
      [4, 'waiting', 0],
    ]);
    expect(progressText(runs[0]!)).toBe('IGPO, hard search, pretrained: 0 of 4 seeds done · seed 1 on screen, iteration 30 of 30 · seed 2 iteration 12 of 30 · seed 3 queued · seed 4 not started');
    expect(progressText(runs[1]!)).toBe('GRPO, hard search, pretrained: all 4 seeds done');
    // 30 + 12 of igpo's 120 iterations, and all 120 of grpo's.
    expect(progressFraction(runs)).toBeCloseTo((42 + 120) / 240, 12);
  });
});
