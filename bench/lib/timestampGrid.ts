/**
 * Dawn rounds timestamp queries down to a multiple of 65,536 ns unless its `timestamp_quantization`
 * toggle is off (bench/lib/gpuTimer.ts counts the passes that look so). Kept apart from the timer
 * so the tables, which run in Node, can read it without the timer's WGSL.
 */

/** Timestamped passes so far, and how many had both timestamps on a 65,536 ns grid. */
export interface TimestampGrid {
  passes: number;
  onGrid: number;
}

/** Dawn's quantization step (its mask clears the low 16 bits of a nanosecond timestamp). */
export const TIMESTAMP_GRID_NS = 65536n;

/**
 * True when the passes look quantized: every one on the grid (unquantized, both timestamps of a
 * pass land there by chance with probability 2^-32), over enough passes to say so.
 */
export function looksQuantized(g: TimestampGrid): boolean {
  return g.passes >= 4 && g.onGrid === g.passes;
}
