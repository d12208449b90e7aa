/**
 * Every claim of every lesson holds on the mean over the lesson seeds (CPU backend); docs/LESSONS.md says
 * how the margins were set (on the lesson seeds only). This file checks the lessons
 * lessonClaims.lesson.test.ts does not (tests/helpers/lessonClaims.ts says which).
 * The measured values are printed, so the numbers quoted in the narratives can be checked.
 */
import { describe, it } from 'vitest';
import { lessonSeeds } from '../../workers/content/lessons';
import { checkOnSeeds, lessonsOfFile } from '../helpers/lessonClaims';

describe('lesson claims hold on the mean over the lesson seeds (CPU backend)', () => {
  for (const l of lessonsOfFile(2)) {
    it(`${l.id}: ${l.title}`, { timeout: 1_200_000 }, () => checkOnSeeds(l, lessonSeeds(l), 'lesson'));
  }
});
