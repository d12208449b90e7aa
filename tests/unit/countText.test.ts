/**
 * countText (workers/core/numberText.ts) writes a count as toLocaleString('en-US') writes an
 * integer, without the Intl set-up a page's first call to it costs.
 */
import { describe, expect, it } from 'vitest';
import { countText } from '../../workers/core/numberText';
import { createRng } from '../../workers/core/rng';

describe('countText', () => {
  it('matches toLocaleString(\'en-US\') on integers of every width, signs and the edges', () => {
    const xs = [0, 1, -1, 9, 10, 99, 100, 999, 1000, -1000, 9999, 10_000, 99_999, 100_000, 999_999, 1_000_000, 10_000, 1_000_000_000, 2 ** 31 - 1, -(2 ** 31), 2 ** 53 - 1, -(2 ** 53 - 1)];
    const rng = createRng(7);
    for (let i = 0; i < 2000; i++) xs.push(Math.floor((rng.next() - 0.5) * 10 ** (1 + Math.floor(rng.next() * 15))));
    const off = xs.filter((x) => countText(x) !== x.toLocaleString('en-US')).map((x) => `${x}: ${countText(x)} vs ${x.toLocaleString('en-US')}`);
    expect(off).toEqual([]);
  });

  it('writes no negative zero, rounds a fraction to the nearest count, and writes what is not finite as String does', () => {
    expect(countText(1234.6)).toBe('1,235');
    expect(countText(-0.4)).toBe('0');
    expect(countText(-0)).toBe('0'); // toLocaleString writes "-0", which no count is
    expect(countText(NaN)).toBe('NaN');
    expect(countText(Infinity)).toBe('Infinity');
  });
});
