/**
 * Seeds as a link, a form or a CLI flag writes them: single seeds and ranges, `1,2,5-8`. A range is
 * cheap to write and costly to expand (`0-2000000000` is two billion seeds), so the text is read
 * into ranges first, their seeds are counted, and only a count within the caller's limit is
 * expanded. The limit is on the total, never on one range: any way of writing an accepted set of
 * seeds (`1-10000,10001-10005` or its merged `1-10005`) reads the same.
 */
import { countText } from './numberText';

/** Largest seed: a config's seed is an integer in [0, 2^31). */
export const MAX_SEED = 2 ** 31 - 1;

export interface SeedRange {
  lo: number;
  hi: number;
}

/** A problem in seed text, its message without a prefix (the caller names the flag or key). */
export class SeedTextError extends Error {}

const shorten = (s: string) => (s.length > 40 ? `${s.slice(0, 40)}…` : s);

/** "1-3,5" -> [{1,3},{5,5}], nothing expanded; throws SeedTextError naming the first bad part. */
export function readSeedRanges(text: string): SeedRange[] {
  const out: SeedRange[] = [];
  for (const part of text.split(',')) {
    const m = /^(\d{1,10})(?:-(\d{1,10}))?$/.exec(part.trim());
    if (!m) throw new SeedTextError(`expected seeds and ranges like 1,2,5-8, got "${shorten(part)}"`);
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (hi > MAX_SEED) throw new SeedTextError(`${hi} is not a seed (an integer in [0, 2^31))`);
    if (hi < lo) throw new SeedTextError(`bad range "${shorten(part)}": it ends before it starts`);
    out.push({ lo, hi });
  }
  return out;
}

/** How many seeds the ranges hold (repeats counted), without expanding them. */
export function seedCount(ranges: readonly SeedRange[]): number {
  let n = 0;
  for (const r of ranges) n += r.hi - r.lo + 1;
  return n;
}

/** Every seed of the ranges in order; throws SeedTextError when a seed is listed twice. */
export function expandSeedRanges(ranges: readonly SeedRange[]): number[] {
  const out: number[] = [];
  for (const { lo, hi } of ranges) for (let x = lo; x <= hi; x++) out.push(x);
  if (new Set(out).size !== out.length) throw new SeedTextError('a seed is listed twice');
  return out;
}

/** Reads, counts against `max`, then expands. Throws SeedTextError naming what is wrong. */
export function parseSeedRanges(text: string, max: number): number[] {
  const ranges = readSeedRanges(text);
  const n = seedCount(ranges);
  if (n > max) throw new SeedTextError(`${countText(n)} seeds in ${countText(ranges.length)} part${ranges.length === 1 ? '' : 's'}; at most ${countText(max)}`);
  return expandSeedRanges(ranges);
}

/** The compact text of seeds: runs of consecutive seeds as ranges. 1,2,3,5 -> "1-3,5". */
export function seedRangesText(seeds: readonly number[]): string {
  const out: string[] = [];
  for (let i = 0; i < seeds.length; ) {
    let j = i;
    while (j + 1 < seeds.length && seeds[j + 1] === seeds[j]! + 1) j++;
    out.push(j > i ? `${seeds[i]}-${seeds[j]}` : `${seeds[i]}`);
    i = j + 1;
  }
  return out.join(',');
}
