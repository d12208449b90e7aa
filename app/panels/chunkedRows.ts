/**
 * Rows of a large table drawn a chunk per task. The reward matrix of a batch of 64 x 64 rollouts is
 * 4,096 cells; drawn at once, on a 2-core machine, they took a task of 53-62 ms (React's render and
 * commit) and then a frame of 90-127 ms (style, layout and paint of every cell). In chunks of 1,024
 * cells the longest task is 69-77 ms: a frame that lays out the new rows and paints the whole table
 * (BENCHMARKS.md). Each new `key` (a new batch) starts again from one chunk.
 */
import { useEffect, useState } from 'react';

/** Cells one task commits. */
export const CELLS_PER_TASK = 1024;

/** Rows per chunk for rows of `width` cells: at least one. */
export const rowsPerChunk = (width: number, cells = CELLS_PER_TASK) => Math.max(1, Math.floor(cells / Math.max(1, width)));

/** How many of `total` rows of `width` cells to draw now; grows by a chunk per task up to total. */
export function useChunkedRows(total: number, width: number, key: unknown, cells = CELLS_PER_TASK): number {
  const step = rowsPerChunk(width, cells);
  const [state, setState] = useState({ key, count: step });
  const current = state.key === key ? state : { key, count: step };
  if (current !== state) setState(current);
  const count = Math.min(total, current.count);
  useEffect(() => {
    if (count >= total) return;
    const timer = setTimeout(() => setState((s) => (s.key === key ? { key, count: s.count + step } : s)), 0);
    return () => clearTimeout(timer);
  }, [count, total, key, step]);
  return count;
}
