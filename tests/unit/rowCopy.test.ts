/** copyRows (workers/core/rowCopy.ts) against the subarray-and-set copy it replaced, and its edges. */
import { describe, expect, it } from 'vitest';
import { copyRows } from '../../workers/core/rowCopy';
import { createRng } from '../../workers/core/rng';

/** The copy the backends and the collector made before: a view and set() per row. */
function copyBySet(dst: Int32Array, dstOff: number, dstStride: number, src: Int32Array, srcOff: number, srcStride: number, width: number, rows: number) {
  for (let r = 0; r < rows; r++) dst.set(src.subarray(srcOff + r * srcStride, srcOff + r * srcStride + width), dstOff + r * dstStride);
}

describe('copyRows', () => {
  it('writes what a subarray and set() per row write, and nothing else, on 200 random layouts', () => {
    const rng = createRng(7);
    for (let c = 0; c < 200; c++) {
      const width = rng.int(7);
      const rows = rng.int(40);
      const srcStride = width + rng.int(4);
      const dstStride = width + rng.int(12);
      const srcOff = rng.int(5);
      const dstOff = rng.int(9);
      const src = Int32Array.from({ length: srcOff + rows * srcStride + 3 }, () => rng.int(1000));
      const init = Int32Array.from({ length: dstOff + rows * dstStride + 3 }, () => -1 - rng.int(1000));
      const [a, b] = [Int32Array.from(init), Int32Array.from(init)];
      copyRows(a, dstOff, dstStride, src, srcOff, srcStride, width, rows);
      copyBySet(b, dstOff, dstStride, src, srcOff, srcStride, width, rows);
      expect(Array.from(a), `case ${c}: width ${width}, rows ${rows}, strides ${srcStride}/${dstStride}`).toEqual(Array.from(b));
    }
  });

  it('copies a turn block into a sequence buffer: rows of w tokens to offset start of rows of L', () => {
    const [N, L, w, start] = [3, 8, 2, 4];
    const seq = new Int32Array(N * L);
    copyRows(seq, start, L, Int32Array.from([1, 2, 3, 4, 5, 6]), 0, w, w, N);
    expect(Array.from(seq)).toEqual([0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 3, 4, 0, 0, 0, 0, 0, 0, 5, 6, 0, 0]);
  });
});
