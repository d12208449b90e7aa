/**
 * A training crash, defined (docs/ARENA.md "Crash"): the update went non-finite; or success, smoothed
 * over a trailing window, fell below a fraction of its own running best after that best had reached a
 * minimum, and stayed below for `hold` iterations in a row; or the policy's entropy, smoothed the same
 * way, collapsed below a floor while the smoothed success was low, for `hold` iterations. The minimum
 * keeps a run that never learned from "crashing" on noise; the window and the hold keep one bad batch
 * from counting. The entropy rule catches the collapse that comes before any success: a policy that
 * turned deterministic on a wrong answer has all-equal groups, so no advantage, and never recovers;
 * one that turned deterministic on right answers (success above `lowSuccess`) has converged.
 */
import type { MetricRow } from '../../core/metrics';

export interface CrashOptions {
  /** Trailing iterations the success is averaged over (no smoothed value before the window is full). */
  window: number;
  /** The smoothed best must have reached this before a fall counts. */
  minBest: number;
  /** A smoothed success below frac x best is a fall. */
  frac: number;
  /** Consecutive fallen (or collapsed) iterations that make a crash. */
  hold: number;
  /** Smoothed entropy (nats) below this is a collapsed policy... */
  entropyFloor: number;
  /** ...a crash while the smoothed success is below this. */
  lowSuccess: number;
  /** The iteration whose update went non-finite (the trainer stopped there), if it did. */
  nonFiniteAt: number | null;
}

export const CRASH_DEFAULTS: Readonly<CrashOptions> = { window: 5, minBest: 0.3, frac: 0.5, hold: 5, entropyFloor: 0.05, lowSuccess: 0.5, nonFiniteAt: null };

export type CrashRow = Pick<MetricRow, 'iter' | 'success_rate' | 'entropy' | 'loss' | 'grad_norm'>;

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
  let flat = 0;
  let sum = 0;
  let ent = 0;
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    if (nonFinite.length && r.iter >= Math.min(...nonFinite)) break;
    sum += r.success_rate;
    ent += r.entropy;
    if (i >= o.window) {
      sum -= rows[i - o.window]!.success_rate;
      ent -= rows[i - o.window]!.entropy;
    }
    if (i < o.window - 1) continue;
    const s = sum / o.window;
    const e = ent / o.window;
    flat = e < o.entropyFloor && s < o.lowSuccess ? flat + 1 : 0;
    if (flat === o.hold) {
      const start = rows[i - o.hold + 1]!;
      return {
        crashed: true,
        at: start.iter,
        why: `entropy (mean of ${o.window} iterations) collapsed below ${o.entropyFloor} nats with success below ${o.lowSuccess} at iteration ${start.iter} and stayed there ${o.hold} iterations`,
      };
    }
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
