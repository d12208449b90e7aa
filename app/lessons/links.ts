/**
 * A lesson step as a share link: the step's run config, `step=<iters>` (run to the iteration the
 * lesson's claims measure, then pause), `lesson=<id>:<n>`, and in presenter mode `present=1` with
 * the lesson's `hide=` list.
 */
import type { BackendChoice } from '../../workers/entry/api';
import { encodeShareLink, lessonRun, lessonRunConfig, type Lesson } from '../../workers/meta';

export interface StepLinkOptions {
  present?: boolean;
  backend?: BackendChoice;
}

/** The hash of step `index` (0-based) of a lesson. */
export function lessonStepHash(lesson: Lesson, index: number, opts: StepLinkOptions = {}): string {
  const step = lesson.steps[index];
  if (!step) throw new Error(`lesson ${lesson.id} has no step ${index + 1}`);
  const run = lessonRun(lesson, step.run);
  return encodeShareLink(lessonRunConfig(run), {
    step: run.iters,
    lesson: { id: lesson.id, step: index + 1 },
    ...(opts.backend ? { backend: opts.backend } : {}),
    ...(opts.present ? { present: true, hide: lesson.hide } : {}),
  });
}
