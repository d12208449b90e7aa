import { describe, expect, it } from 'vitest';
import { backwardScratchWords, HEAD_CHUNK_ROWS, headGradKernel, SLOT_CHUNK_ROWS, slotGradKernel } from '../../kernels/model/mlpKernels';
import { REDUCE_MAX_CHUNKS, REDUCE_MAX_SCRATCH_WORDS, rowChunks } from '../../kernels/reduce';

describe('row chunks of the two-level reductions', () => {
  it('fixed chunks up to the chunk cap, then longer chunks; every row in exactly one chunk', () => {
    expect(rowChunks(0, 100, 64)).toEqual({ rowsPerChunk: 64, chunks: 0 });
    expect(rowChunks(1, 100, 64)).toEqual({ rowsPerChunk: 64, chunks: 1 });
    expect(rowChunks(64, 100, 64)).toEqual({ rowsPerChunk: 64, chunks: 1 });
    expect(rowChunks(65, 100, 64)).toEqual({ rowsPerChunk: 64, chunks: 2 });
    expect(rowChunks(1152, 1235, 64)).toEqual({ rowsPerChunk: 64, chunks: 18 });
    expect(rowChunks(64 * REDUCE_MAX_CHUNKS, 1235, 64)).toEqual({ rowsPerChunk: 64, chunks: REDUCE_MAX_CHUNKS });
    expect(rowChunks(73728, 1235, 64)).toEqual({ rowsPerChunk: 288, chunks: 256 });
    for (const [rows, outputs, min] of [[1, 1, 1], [999, 7, 16], [16385, 20, 64], [73728, 8256, 64], [3072, 262656, 64], [50000, 5e6, 64]]) {
      const { rowsPerChunk, chunks } = rowChunks(rows!, outputs!, min!);
      expect(rowsPerChunk).toBeGreaterThanOrEqual(min!);
      expect(chunks).toBeLessThanOrEqual(REDUCE_MAX_CHUNKS);
      expect((chunks - 1) * rowsPerChunk).toBeLessThan(rows!);
      expect(chunks * rowsPerChunk).toBeGreaterThanOrEqual(rows!);
      expect(chunks * outputs!).toBeLessThanOrEqual(Math.max(REDUCE_MAX_SCRATCH_WORDS, outputs!));
    }
    expect(() => rowChunks(-1, 4, 64)).toThrow(/row count/);
    expect(() => rowChunks(4, 4, 0)).toThrow(/chunk size/);
  });

  it('scratch words per reduction and for a run (the largest minibatch, the widest reduction)', () => {
    const dims = { V: 19, K: 8, D: 16, H: 64 };
    const c = { dims, numRows: 1152, seqLen: 19 };
    expect(headGradKernel.scratchWords(c)).toBe(18 * 65 * 19);
    // slotGrad's table per chunk is [K, V, H].
    expect(slotGradKernel.scratchWords(c)).toBe((1152 / SLOT_CHUNK_ROWS) * 8 * 19 * 64);
    expect(backwardScratchWords(dims, 19, [1152, 576])).toBe(18 * 8 * 19 * 64);
    expect(backwardScratchWords(dims, 19, [])).toBe(1);
    expect([HEAD_CHUNK_ROWS, SLOT_CHUNK_ROWS]).toEqual([64, 64]);
    // A wide table caps the chunk count by the scratch budget: V 80, H 1024, K 8 is 655,360 words a chunk.
    const wide = { dims: { V: 80, K: 8, D: 16, H: 1024 }, numRows: 9216, seqLen: 19 };
    expect(slotGradKernel.scratchWords(wide)).toBe(6 * 8 * 80 * 1024);
  });
});
