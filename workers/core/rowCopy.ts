/**
 * Copies `rows` rows of `width` entries: row r of `src` starts at srcOff + r * srcStride, and goes to
 * dstOff + r * dstStride in `dst`. An index loop rather than a `subarray` view and `set()` per row:
 * the rows here are a turn's few tokens or a prompt, for every rollout, and at 8,192 rollouts the
 * views were tens of thousands of short-lived objects per rollout; the loop copies a turn's 8,192
 * rows of 5 tokens in 0.055 ms against 0.38 ms (BENCHMARKS.md, the tasks' garbage).
 */
export function copyRows(
  dst: Int32Array,
  dstOff: number,
  dstStride: number,
  src: Int32Array,
  srcOff: number,
  srcStride: number,
  width: number,
  rows: number,
): void {
  for (let r = 0; r < rows; r++) {
    const d = dstOff + r * dstStride;
    const s = srcOff + r * srcStride;
    for (let k = 0; k < width; k++) dst[d + k] = src[s + k]!;
  }
}
