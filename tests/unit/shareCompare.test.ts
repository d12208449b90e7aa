import { describe, expect, it } from 'vitest';
import { defaultConfig, withFieldText } from '../../workers/core/config';
import { decodeShareLink, encodeShareLink } from '../../workers/content/shareLink';

const a = withFieldText(defaultConfig(), 'seed', '7');
const b = withFieldText(withFieldText(a, 'methods', 'grpo,dapo'), 'lr', '0.01');

describe('compare= in a share link', () => {
  it('round-trips both runs of the Compare view', () => {
    const hash = encodeShareLink(a, { compare: { a, b }, step: 12 });
    expect(hash).toContain('compare=seed:7|');
    const link = decodeShareLink(hash);
    expect(link.errors).toEqual([]);
    expect(link.step).toBe(12);
    expect(link.compare?.a).toEqual(a);
    expect(link.compare?.b).toEqual(b);
  });

  it('an empty side is the defaults', () => {
    const link = decodeShareLink(encodeShareLink(defaultConfig(), { compare: { a: defaultConfig(), b } }));
    expect(link.errors).toEqual([]);
    expect(link.compare?.a).toEqual(defaultConfig());
  });

  it('names a bad key inside a compared run and applies none of it', () => {
    const link = decodeShareLink('#v=1&seed=3&compare=seed:7|lr:abc;step:4');
    expect(link.compare).toBeUndefined();
    expect(link.config.seed).toBe(3);
    const keys = link.errors.map((e) => e.key);
    expect(keys).toContain('compare B: lr');
    expect(keys).toContain('compare B: step');
  });

  it('refuses a value that is not two runs', () => {
    const link = decodeShareLink('#v=1&compare=seed:7');
    expect(link.compare).toBeUndefined();
    expect(link.errors[0]).toMatchObject({ key: 'compare', message: expect.stringMatching(/two runs/) });
  });

  it('carries the iteration both runs reached, and a link without it still reads', () => {
    const hash = encodeShareLink(a, { compare: { a, b, step: 30 } });
    expect(hash).toMatch(/&compare=seed:7\|[^&]*\|step:30$/);
    const link = decodeShareLink(hash);
    expect(link.errors).toEqual([]);
    expect(link.compare).toEqual({ a, b, step: 30 });
    expect(decodeShareLink('#v=1&compare=|methods:grpo,edge').compare?.step).toBeUndefined();
    expect(decodeShareLink('#v=1&compare=|methods:grpo,edge|step:0').compare?.step).toBeUndefined();
  });

  it('names a bad iteration count and applies neither run', () => {
    const link = decodeShareLink('#v=1&compare=seed:7|seed:7|step:-4');
    expect(link.compare).toBeUndefined();
    expect(link.errors[0]).toMatchObject({ key: 'compare', message: expect.stringMatching(/^step: expected an integer/) });
  });
});
