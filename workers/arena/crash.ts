/**
 * A training crash, defined (docs/ARENA.md "Crash"): either the update went non-finite, or success,
 * smoothed over a trailing window, fell below a fraction of its own running best after that best had
 * reached a minimum, and stayed below for `hold` iterations in a row. The minimum keeps a run that
 * never learned from "crashing" on noise; the window and the hold keep one bad batch from counting.
 * Entropy is not part of it: an entropy collapse that costs success shows as the drop, and one that
 * does not is no crash.
 */
import type { MetricRow } from '../metrics';

export interface CrashOptions {
  /** Trailing iterations the success is averaged over (no smoothed value before the window is full). */
  window: number;
  /** The smoothed best must have reached this before a fall counts. */
  minBest: number;
  /** A smoothed success below frac x best is a fall. */
  frac: number;
  /** Consecutive fallen iterations that make a crash. */
  hold: number;
  /** The iteration whose update went non-finite (the trainer stopped there), if it did. */
  nonFiniteAt: number | null;
}

export const CRASH_DEFAULTS: Readonly<CrashOptions> = { window: 5, minBest: 0.3, frac: 0.5, hold: 5, nonFiniteAt: null };

export type CrashRow = Pick<MetricRow, 'iter' | 'success_rate' | 'loss' | 'grad_norm'>;

export interface Crash {
  crashed: boolean;
  /** The iteration the crash starts at: the first fallen one, or the non-finite update. */
  at: number | null;
  why: string | null;
}

export function detectCrash(rows: readonly CrashRow[], opts: Partial<CrashOptions> = {}): Crash {
  const o = { ...CRASH_DEFAULTS, ...opts };
  if (!(Number.isInteger(o.window) && o.window >= 1 && Number.isInteger(o.hold) && o.hold >= 1)) throw new Error('detectCrash: window and hold must be whole numbers >= 1');
  if (!(o.frac > 0 && o.frac < 1)) throw new Error(`detectCrash: frac must be in (0, 1), got ${o.frac}`);
  const bad = rows.find((r) => !Number.isFinite(r.success_rate) || !Number.isFinite(r.loss) || !Number.isFinite(r.grad_norm));
  const nonFinite = [bad?.iter, o.nonFiniteAt ?? undefined].filter((x): x is number => x !== undefined);
  let best = -Infinity;
  let bestIter = 0;
  let run = 0;
  let sum = 0;
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    if (nonFinite.length && r.iter >= Math.min(...nonFinite)) break;
    sum += r.success_rate;
    if (i >= o.window) sum -= rows[i - o.window]!.success_rate;
    if (i < o.window - 1) continue;
    const s = sum / o.window;
    if (best >= o.minBest && s < o.frac * best) {
      run++;
      if (run === o.hold) {
        const start = rows[i - o.hold + 1]!;
        return {
          crashed: true,
          at: start.iter,
          why: `success (mean of ${o.window} iterations) fell below ${o.frac} x its best ${best.toFixed(3)} (iteration ${bestIter}) at iteration ${start.iter} and stayed there ${o.hold} iterations`,
        };
      }
    } else run = 0;
    if (s > best) {
      best = s;
      bestIter = r.iter;
    }
  }
  if (nonFinite.length) {
    const at = Math.min(...nonFinite);
    return { crashed: true, at, why: `the update at iteration ${at} went non-finite` };
  }
  return { crashed: false, at: null, why: null };
}
