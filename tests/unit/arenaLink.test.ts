/** The Arena view's arena in the share link: `arena=<spec>` round-trips, reads as text, and a bad one is named without losing the rest. */
import { describe, expect, it } from 'vitest';
import { ARENA_PRESETS, parseArenaSpec } from '../../workers/content/arena/dimensions';
import { defaultConfig, withFieldText } from '../../workers/core/config';
import { decodeShareLink, encodeShareLink } from '../../workers/content/shareLink';

const TEXT = 'task=search;iters=15;seeds=1-2;clip=token,cispo;filter=none;advantage=trajectory;aggregation=seq-mean-token-mean;set.batch=4;set.group=4';

describe('arena= in the share link', () => {
  it('round-trips every preset and a small arena, with the rest of the link', () => {
    const config = withFieldText(defaultConfig(), 'seed', '7');
    for (const spec of [parseArenaSpec(TEXT), ...ARENA_PRESETS.map((p) => p.spec)]) {
      const link = decodeShareLink(encodeShareLink(config, { arena: spec, step: 3 }));
      expect(link.errors).toEqual([]);
      expect(link.arena).toEqual(spec);
      expect(link.config.seed).toBe(7);
      expect(link.step).toBe(3);
    }
  });

  it('writes the arena readably: its ; = , stay as they are', () => {
    expect(encodeShareLink(defaultConfig(), { arena: parseArenaSpec(TEXT) })).toBe(`#v=1&arena=${TEXT}`);
  });

  it('names a bad arena and applies every other key', () => {
    const link = decodeShareLink('#v=1&seed=5&arena=task=nope;iters=15&batch=4');
    expect(link.arena).toBeUndefined();
    expect(link.errors).toHaveLength(1);
    expect(link.errors[0]!.key).toBe('arena');
    expect(link.errors[0]!.message).toMatch(/task/);
    expect(link.config.seed).toBe(5);
    expect(link.config.batch).toBe(4);
  });

  it('names an unknown arena key and a level that does not exist', () => {
    expect(decodeShareLink('#arena=task=search;colour=red').errors[0]!.message).toMatch(/unknown key "colour"/);
    expect(decodeShareLink('#arena=clip=token,hard').errors[0]!.message).toMatch(/clip level "hard"/);
  });

  it('carries how many seeds every cell had run: done:<k> after the spec', () => {
    const spec = parseArenaSpec(TEXT);
    const hash = encodeShareLink(defaultConfig(), { arena: spec, arenaDone: 2 });
    expect(hash).toBe(`#v=1&arena=${TEXT}|done:2`);
    const link = decodeShareLink(hash);
    expect(link.errors).toEqual([]);
    expect(link.arena).toEqual(spec);
    expect(link.arenaDone).toBe(2);
    expect(decodeShareLink(`#arena=${TEXT}|done:x`).errors[0]!.message).toMatch(/^done: expected an integer/);
  });
});
