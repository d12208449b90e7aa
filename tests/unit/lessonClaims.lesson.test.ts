/**
 * Every claim of every lesson holds on the mean over the lesson seeds (CPU backend); docs/LESSONS.md says
 * how the margins were set (on the lesson seeds only). This file checks half the lessons and
 * lessonClaims2.lesson.test.ts the others (tests/helpers/lessonClaims.ts says which).
 * The measured values are printed, so the numbers quoted in the narratives can be checked.
 */
import { describe, it } from 'vitest';
import { lessonSeeds } from '../../workers/content/lessons';
import { checkOnSeeds, lessonsOfFile } from '../helpers/lessonClaims';

describe('lesson claims hold on the mean over the lesson seeds (CPU backend)', () => {
  for (const l of lessonsOfFile(1)) {
    it(`${l.id}: ${l.title}`, { timeout: 1_200_000 }, () => checkOnSeeds(l, lessonSeeds(l), 'lesson'));
  }
});
