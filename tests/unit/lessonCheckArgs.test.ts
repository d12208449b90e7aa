import { describe, expect, it } from 'vitest';
import { parse, seedBlocks } from '../../cli/lessonCheck';
import { heldOutSeeds, lessonById, lessonSeeds } from '../../workers/content/lessons';

describe('lessons:check seed sets', () => {
  const lesson = lessonById('collapse')!;

  it('lesson, held-out and both are the seeds the lesson tests use', () => {
    expect(seedBlocks(lesson, 'lesson')).toEqual([['lesson', lessonSeeds(lesson)]]);
    expect(seedBlocks(lesson, 'held-out')).toEqual([['held-out', heldOutSeeds(lesson)]]);
    expect(seedBlocks(lesson, 'both').map(([label]) => label)).toEqual(['lesson', 'held-out']);
  });

  it('fresh: two blocks of 4 seeds, none of them a lesson or held-out seed', () => {
    const blocks = seedBlocks(lesson, 'fresh');
    expect(blocks.map(([, seeds]) => seeds.length)).toEqual([4, 4]);
    const fresh = blocks.flatMap(([, seeds]) => seeds);
    expect(new Set(fresh).size).toBe(8);
    for (const seed of [...lessonSeeds(lesson), ...heldOutSeeds(lesson)]) expect(fresh).not.toContain(seed);
  });

  it('names a bad --seeds value and the values it takes', () => {
    expect(parse(['--seeds', 'fresh']).seeds).toBe('fresh');
    expect(parse([]).seeds).toBe('both');
    expect(() => parse(['--seeds', 'all'])).toThrow('--seeds: expected one of lesson, held-out, both, fresh, got "all"');
  });
});
