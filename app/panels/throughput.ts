/**
 * Iterations per second as the page sees them (wall clock): the trainer's `ms` is its compute time
 * per iteration, which leaves out rollout waits, the pace delay and the trip to the page, so it
 * overstates throughput by 1.5-2x. The rate is taken over the last few seconds of arrivals.
 */

/** Seconds of arrivals the rate is taken over. */
export const RATE_WINDOW_S = 4;

export interface Arrival {
  iter: number;
  /** performance.now() in ms when the page received it. */
  at: number;
}

/** Adds an arrival and drops those older than the window (keeping one before it as the start). */
export function addArrival(log: readonly Arrival[], a: Arrival): Arrival[] {
  const out = log.length > 0 && a.iter < log[log.length - 1]!.iter ? [] : [...log];
  out.push(a);
  while (out.length > 2 && a.at - out[1]!.at >= RATE_WINDOW_S * 1000) out.shift();
  return out;
}

/** Iterations per second over the log, or null with fewer than two arrivals or no time between them. */
export function iterRate(log: readonly Arrival[]): number | null {
  if (log.length < 2) return null;
  const first = log[0]!;
  const last = log[log.length - 1]!;
  const dt = (last.at - first.at) / 1000;
  return dt > 0 ? (last.iter - first.iter) / dt : null;
}

export function rateText(rate: number | null): string {
  if (rate === null) return '';
  return `${rate >= 10 ? rate.toFixed(0) : rate.toFixed(1)} it/s`;
}
