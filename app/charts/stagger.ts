/**
 * Staggered chart updates: each chart takes new rows only at its own slot of a fixed period, so
 * the charts of one store update commit one at a time in separate tasks instead of all in one
 * (a commit of every chart at once was a main-thread long task on every update; BENCHMARKS.md).
 * The first rows wait for their slot too: every chart drawing its first rows in one commit was a
 * long task of 50-70 ms at the start of each run on a 2-core machine. A series that shrinks (a
 * reset, a roll-back) shows at once, and so does every row while `flush` is set (the run is paused
 * or took a single step): a paused page shows every chart at the same, latest iteration.
 */
import { useEffect, useRef, useState } from 'react';

/** Period in which every chart takes its latest rows once. */
export const STAGGER_PERIOD_MS = 600;

/** `series` as the chart in `slot` of `slots` shows it: updated at most once per period. */
export function useStaggeredSeries<T>(series: readonly T[], slot: number, slots: number, periodMs = STAGGER_PERIOD_MS, flush = false): readonly T[] {
  const [shown, setShown] = useState(series);
  const latest = useRef(series);
  latest.current = series;
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => {
    if (periodMs <= 0 || series === shown) return;
    // Flushed rows are kept as shown, so a run that resumes does not step back to the older rows.
    if (series.length < shown.length || flush) {
      if (timer.current !== null) clearTimeout(timer.current);
      timer.current = null;
      setShown(series);
      return;
    }
    if (timer.current !== null) return;
    const now = performance.now();
    const offset = ((slot % slots) / slots) * periodMs;
    const next = Math.ceil((now - offset) / periodMs) * periodMs + offset;
    timer.current = setTimeout(() => {
      timer.current = null;
      setShown(latest.current);
    }, Math.max(0, next - now));
  }, [series, shown, slot, slots, periodMs, flush]);
  useEffect(
    () => () => {
      if (timer.current !== null) clearTimeout(timer.current);
    },
    [],
  );
  // A period of 0 is a live chart.
  return periodMs > 0 && !flush ? shown : series;
}
