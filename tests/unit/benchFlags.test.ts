/** The bench scripts' flags (bench/lib/flags.ts): unknown flags, missing values and bad numbers are refused by name. */
import { describe, expect, it } from 'vitest';
import { FlagError, parseFlags } from '../../bench/lib/flags';

const SPEC = {
  iters: { kind: 'count', fallback: '10' },
  batches: { kind: 'counts', fallback: '16,128' },
  set: { kind: 'text', fallback: 'a=1' },
  tasks: { kind: 'text', fallback: '', oneOf: ['search', 'tools'] },
} as const;

describe('parseFlags', () => {
  it('gives the fallbacks, and the values given', () => {
    expect(parseFlags([], SPEC)).toEqual({ iters: 10, batches: [16, 128], set: 'a=1', tasks: '' });
    expect(parseFlags(['--batches', '2', '--iters', '3', '--set', 'b=2,c=3', '--tasks', 'tools,search'], SPEC)).toEqual({ iters: 3, batches: [2], set: 'b=2,c=3', tasks: 'tools,search' });
  });

  it('refuses what it cannot read, naming the flag', () => {
    const bad: Array<[string[], RegExp]> = [
      [['--iter', '100'], /unknown flag --iter; the flags are --iters, --batches, --set, --tasks/],
      [['iters', '100'], /unknown flag iters/],
      [['--tasks', 'search,serch'], /--tasks: "serch" is not one of search, tools/],
      [['--iters'], /--iters needs a value/],
      [['--iters', '--set', 'x'], /--iters needs a value/],
      [['--iters', '2.5'], /--iters: "2.5" is not a whole number >= 1/],
      [['--iters', '0'], /--iters: "0" is not a whole number >= 1/],
      [['--batches', '16,,128'], /--batches: "" is not a whole number >= 1/],
      [['--batches', '16,x'], /--batches: "x" is not a whole number >= 1/],
    ];
    for (const [argv, msg] of bad) {
      expect(() => parseFlags(argv, SPEC), argv.join(' ')).toThrow(FlagError);
      expect(() => parseFlags(argv, SPEC), argv.join(' ')).toThrow(msg);
    }
  });
});
