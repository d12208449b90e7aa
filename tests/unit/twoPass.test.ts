/**
 * The layouts of the two-pass whole-array reductions (kernels/reduce.ts defineTwoPass): gradNorm's
 * blocks and stats' chunks of whole trajectories are functions of the sizes alone (which fixes the
 * summation order), cover every element once, and size the scratch; STATS_CHUNK_WORDS matches the
 * WGSL record it sizes.
 */
import { describe, expect, it } from 'vitest';
import { GRAD_NORM_BLOCK, GRAD_NORM_BLOCK_HARDWARE, gradNormBlocks, gradNormKernel } from '../../kernels/optimizer/adam';
import {
  STATS_CHUNK_ROWS,
  STATS_CHUNK_WORDS,
  STATS_COMBINE_WORKGROUPS,
  STATS_WORKGROUP_SIZE,
  statsChunks,
  statsKernel,
} from '../../kernels/stats/stats';
import { UNROLLED_MAX_VOCAB } from '../../kernels/softmax/rowUnrolled';
import { CONFIG_SELECTORS, softmaxRowLayout } from '../../kernels/selectors';

const SHAPE = { vocab: 19, group: 8 };
import statsWGSL from '../../kernels/stats/stats.wgsl?raw';

describe('gradNorm blocks', () => {
  it('ceil(n / block) blocks; the scratch holds at least one word', () => {
    const B = GRAD_NORM_BLOCK;
    expect([0, 1, B - 1, B, B + 1, 5 * B + 17, 276_504].map((n) => gradNormBlocks(n))).toEqual([0, 1, 1, 1, 2, 6, 34]);
    expect(gradNormKernel.scratchWords({ n: 0 })).toBe(1);
    expect(gradNormKernel.scratchWords({ n: 9795 })).toBe(2);
    expect(gradNormKernel.dispatches).toBe(2);
    expect(gradNormKernel.kernels.map((k) => k.label)).toEqual(['gradNorm', 'gradNormSum']);
  });
  it('the hardware variant takes blocks of 2,048 and the scratch follows; ', () => {
    expect(CONFIG_SELECTORS.gradNormBlock.pick('thread', SHAPE)).toBe(GRAD_NORM_BLOCK);
    expect(CONFIG_SELECTORS.gradNormBlock.pick('subgroup', SHAPE)).toBe(GRAD_NORM_BLOCK_HARDWARE);
    const B = GRAD_NORM_BLOCK_HARDWARE;
    expect([0, 1, B, B + 1, 9795, 276_504].map((n) => gradNormBlocks(n, B))).toEqual([0, 1, 1, 2, 5, 136]);
    expect(gradNormKernel.scratchWords({ n: 9795, block: B })).toBe(5);
  });
});

describe('stats chunks', () => {
  it('whole trajectories, at most one per thread, about STATS_CHUNK_ROWS rows', () => {
    // The default, 8x and 64x batches (Tp 9), the scale preset (Tp 3), one-row trajectories, long ones.
    expect(statsChunks(128, 9)).toEqual({ trajPerChunk: 227, chunks: 1 });
    expect(statsChunks(1024, 9)).toEqual({ trajPerChunk: 227, chunks: 5 });
    expect(statsChunks(8192, 9)).toEqual({ trajPerChunk: 227, chunks: 37 });
    expect(statsChunks(65536, 9)).toEqual({ trajPerChunk: 227, chunks: 289 });
    expect(statsChunks(1024, 3)).toEqual({ trajPerChunk: 256, chunks: 4 });
    expect(statsChunks(257, 1)).toEqual({ trajPerChunk: 256, chunks: 2 });
    expect(statsChunks(6, 600)).toEqual({ trajPerChunk: 3, chunks: 2 });
    expect(statsChunks(3, 2500)).toEqual({ trajPerChunk: 1, chunks: 3 });
    expect(statsChunks(0, 9)).toEqual({ trajPerChunk: 227, chunks: 0 });
    // The layout the kernel bench compares (statsChunkRows): 2 rows per thread.
    expect(statsChunks(65536, 9, 512)).toEqual({ trajPerChunk: 56, chunks: 1171 });
    for (const [N, Tp] of [[1, 1], [999, 7], [5000, 2], [33, 513], [70000, 1]]) {
      const { trajPerChunk, chunks } = statsChunks(N!, Tp!);
      expect(trajPerChunk).toBeGreaterThanOrEqual(1);
      expect(trajPerChunk).toBeLessThanOrEqual(STATS_WORKGROUP_SIZE);
      expect(trajPerChunk * Tp!).toBeLessThanOrEqual(Math.max(STATS_CHUNK_ROWS, Tp!));
      expect((chunks - 1) * trajPerChunk).toBeLessThan(N!);
      expect(chunks * trajPerChunk).toBeGreaterThanOrEqual(N!);
    }
  });

  it('scratch: one StatsChunk record per chunk, one even without trajectories', () => {
    expect(statsKernel.scratchWords({ numTraj: 8192, tp: 9, minibatches: 1 })).toBe(37 * STATS_CHUNK_WORDS);
    expect(statsKernel.scratchWords({ numTraj: 0, tp: 9, minibatches: 1 })).toBe(STATS_CHUNK_WORDS);
    expect(statsKernel.kernels.map((k) => k.label)).toEqual(['stats', 'statsCombine']);
  });

  it('the hardware variant spreads pass 2 over a workgroup per 4 of the 48 histogram words', () => {
    expect([CONFIG_SELECTORS.statsSpreadBins.pick('thread', SHAPE), CONFIG_SELECTORS.statsSpreadBins.pick('subgroup', SHAPE)]).toEqual([false, true]);
    expect(STATS_COMBINE_WORKGROUPS).toBe(13);
    const config = { numTraj: 8192, tp: 9, minibatches: 1 };
    expect(statsKernel.scratchWords({ ...config, spreadBins: true })).toBe(statsKernel.scratchWords(config));
  });

  it('STATS_CHUNK_WORDS is the word count of struct StatsChunk in stats.wgsl', () => {
    const code = statsWGSL.replace(/\/\/.*$/gm, '');
    const consts = new Map([...code.matchAll(/const\s+(\w+)\s*:\s*u32\s*=\s*(\d+)u\s*;/g)].map((m) => [m[1]!, Number(m[2])]));
    const body = /struct\s+StatsChunk\s*\{([^}]*)\}/.exec(code)![1]!;
    const words = body
      .split(/,\s*\n/)
      .map((f) => f.trim())
      .filter((f) => f.length > 0)
      .map((f) => {
        const type = f.slice(f.indexOf(':') + 1).trim().replace(/,$/, '');
        const arr = /^array<(?:u32|f32),\s*(\w+)>$/.exec(type);
        if (arr) return consts.get(arr[1]!) ?? Number(arr[1]);
        expect(['u32', 'f32']).toContain(type);
        return 1;
      })
      .reduce((a, b) => a + b, 0);
    expect(words).toBe(STATS_CHUNK_WORDS);
  });
});

describe('layouts of sample and tokenStats', () => {
  it('are unrolled up to UNROLLED_MAX_VOCAB logits on either variant, the variant\'s own above', () => {
    const V = UNROLLED_MAX_VOCAB;
    expect([1, 19, V, V + 1, 512].map((v) => softmaxRowLayout('thread', v))).toEqual(['unrolled', 'unrolled', 'unrolled', 'thread', 'thread']);
    expect([1, 19, V, V + 1, 512].map((v) => softmaxRowLayout('subgroup', v))).toEqual(['unrolled', 'unrolled', 'unrolled', 'subgroup', 'subgroup']);
  });
});
