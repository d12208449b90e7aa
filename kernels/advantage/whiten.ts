/**
 * Masked batch whitening in place (verl `masked_whiten`, used by REINFORCE++ and PPO, docs/METHODS.md
 * 4.7): over the masked rows,
 *   mean = sum m A / sum m,  var = sum m (A - mean)^2 / (sum m - 1)   (unbiased, as verl)
 *   A <- (A - mean) / sqrt(var + 1e-8)
 * With one masked row (verl raises) A - mean is kept; unmasked rows become 0.
 *
 * The GPU runs three dispatches (kernels/stages.ts), entry points of whiten.wgsl, deterministic
 * without atomics:
 *   whitenBlocks:       the rows are cut into `blocks` fixed blocks (whitenBlocks, a function of
 *                       the row count alone); a workgroup per block writes the block's masked
 *                       moments (count, mean as pivot + offset, M2) into the caller's scratch
 *                       buffer `partials`;
 *   whitenCombine:      one workgroup merges the block moments by Chan's formula in a fixed tree
 *                       and writes mean and sd after them;
 *   whitenApply:        a thread per row whitens it.
 */
import { defineKernel, uniformLayout, type BufferArg } from '../pipeline';
import { defineStages, withScratchCheck, type ScratchSize } from '../stages';
import whitenWGSL from './whiten.wgsl?raw';

/** Masked moments of a set of rows: how many, their mean, and their sum of squared deviations. */
export interface Moments {
  count: number;
  mean: number;
  m2: number;
}

/**
 * The masked statistics whitening uses (float64): count, mean, the sum of squared deviations m2,
 * the sd it divides by, max |A| and max |A - mean| (the largest deviation; 0 without masked rows).
 */
export function whitenStats(adv: Float32Array, mask: Float32Array): Moments & { sd: number; maxAbs: number; maxDev: number } {
  let count = 0;
  let sum = 0;
  let maxAbs = 0;
  for (let i = 0; i < adv.length; i++) {
    if (mask[i] === 0) continue;
    count++;
    sum += adv[i]!;
    maxAbs = Math.max(maxAbs, Math.abs(adv[i]!));
  }
  const mean = sum / Math.max(count, 1);
  let ss = 0;
  let maxDev = 0;
  for (let i = 0; i < adv.length; i++) {
    if (mask[i] === 0) continue;
    ss += (adv[i]! - mean) ** 2;
    maxDev = Math.max(maxDev, Math.abs(adv[i]! - mean));
  }
  const sd = count > 1 ? Math.sqrt(ss / (count - 1) + 1e-8) : 1;
  return { count, mean, m2: ss, sd, maxAbs, maxDev };
}

/** Whitened copy of adv (float64 sums, rounded to f32 once). */
export function whitenCpu(adv: Float32Array, mask: Float32Array): Float32Array {
  const { mean, sd } = whitenStats(adv, mask);
  const out = new Float32Array(adv.length);
  for (let i = 0; i < adv.length; i++) out[i] = mask[i] !== 0 ? (adv[i]! - mean) / sd : 0;
  return out;
}

/** Workgroups of 256 threads: the combine's tree holds one block per thread. */
export const WHITEN_WORKGROUP_SIZE = 256;
/**
 * Rows per block of pass 1 below WHITEN_MAX_BLOCKS blocks: 8 per thread. The default batch (1,152
 * rows) is one block, 9,216 rows 5 and 73,728 rows 36. Smaller blocks shorten each thread's walk
 * on a GPU, but on SwiftShader every workgroup with barriers costs ~0.3-1 ms (BENCHMARKS.md).
 */
export const WHITEN_MIN_BLOCK = 2048;
/** At most this many blocks (one per thread of the combine); above 524,288 rows a block grows. */
export const WHITEN_MAX_BLOCKS = WHITEN_WORKGROUP_SIZE;
/** Rows above this would make the f32 row counts of whiten.wgsl inexact. */
export const WHITEN_MAX_ROWS = 1 << 24;

export interface WhitenConfig {
  numRows: number;
}

/**
 * How pass 1 cuts `numRows` rows into blocks: WHITEN_MIN_BLOCK rows, or more (a multiple of the
 * workgroup size) so that there are at most WHITEN_MAX_BLOCKS. This fixes every summation order.
 * treeTop is the combine's first tree stride, nextPow2(blocks) / 2: only the levels the blocks need.
 */
export function whitenBlocks(numRows: number): { block: number; blocks: number; treeTop: number } {
  const wg = WHITEN_WORKGROUP_SIZE;
  const block = Math.max(WHITEN_MIN_BLOCK, Math.ceil(numRows / (WHITEN_MAX_BLOCKS * wg)) * wg);
  const blocks = Math.ceil(numRows / block);
  return { block, blocks, treeTop: treeTopFor(blocks) };
}

/** The merge tree's first stride for `slots` slots, nextPow2(slots) / 2 (0 for one): only the levels they need. */
function treeTopFor(slots: number): number {
  let top = 0;
  while (Math.max(1, 2 * top) < slots) top = Math.max(1, 2 * top);
  return top;
}

/**
 * Words of the scratch buffer `partials` for numRows rows: a vec4f of moments per block, then one
 * for (pivot, offset, sd, count). Allocate it once per run.
 */
export const whitenScratchWords = (numRows: number) => 4 * (whitenBlocks(numRows).blocks + 1);

/** `struct Whiten` of whiten.wgsl (all three dispatches bind it). */
export const WHITEN_UNIFORM = uniformLayout('Whiten', [
  ['numRows', 'u32'],
  // Rows per block of pass 1 (whitenBlocks); ceil(numRows / block) blocks, at most the workgroup size.
  ['block', 'u32'],
  ['blocks', 'u32'],
  // The combine's first tree stride: nextPow2(blocks) / 2 (0 for one block).
  ['treeTop', 'u32'],
] as const);

const whitenValues = (c: WhitenConfig) => ({ numRows: c.numRows, ...whitenBlocks(c.numRows) });

const checkRows = (c: WhitenConfig) => {
  if (!(Number.isInteger(c.numRows) && c.numRows >= 0 && c.numRows <= WHITEN_MAX_ROWS)) {
    throw new Error(`whiten: ${c.numRows} rows (at most ${WHITEN_MAX_ROWS}: the row counts are f32)`);
  }
};

/** What every dispatch of whitening shares: the file, the workgroup, the uniform and the row-count check. */
const whitenShared = { wgsl: whitenWGSL, file: 'whiten', workgroupSize: WHITEN_WORKGROUP_SIZE, uniform: WHITEN_UNIFORM, check: checkRows, values: whitenValues } as const;

/** Pass 1, a workgroup per block: buffers mask [numRows], adv [numRows] (read), partials. */
export const whitenPartialKernel = defineKernel({
  label: 'whiten',
  entryPoint: 'whitenBlocks',
  ...whitenShared,
  bindings: ['mask', 'adv', 'partials'],
  workgroups: (c: WhitenConfig) => whitenBlocks(c.numRows).blocks,
});

/** The combine, one workgroup (none without rows): buffer partials. */
export const whitenCombineKernel = defineKernel({
  label: 'whitenCombine',
  entryPoint: 'whitenCombine',
  ...whitenShared,
  bindings: { partials: 3 },
  workgroups: (c: WhitenConfig) => (c.numRows > 0 ? 1 : 0),
});

/** The rows, a thread each: buffers mask, partials, adv (whitened in place). */
export const whitenApplyKernel = defineKernel({
  label: 'whitenApply',
  entryPoint: 'whitenApply',
  ...whitenShared,
  bindings: ['mask', 'adv', 'partials'],
  workgroups: (c: WhitenConfig) => Math.ceil(c.numRows / WHITEN_WORKGROUP_SIZE),
});

export type WhitenBuffers = Record<'mask' | 'adv' | 'partials', BufferArg>;

const whitenStages = defineStages<WhitenBuffers, WhitenConfig>('whiten', [whitenPartialKernel, whitenCombineKernel, whitenApplyKernel]);

/** The partials whitening needs, for the refusal of a smaller buffer at bind and update. */
const whitenScratch: ScratchSize<WhitenConfig> = {
  words: (c) => whitenScratchWords(c.numRows),
  needs: (c) => `${c.numRows} rows need`,
  source: 'whitenScratchWords',
};

/**
 * whitenCpu on the GPU, in place: buffers mask [numRows], adv [numRows] (read and written) and
 * partials (scratch of at least whitenScratchWords(numRows) words, the caller's, allocated once).
 * Three dispatches, none without rows; the same bits on every run.
 *
 * Why three dispatches and not two (the merge repeated in every workgroup of the row pass): two
 * save one dependent dispatch on a GPU (a few µs) for a tree of <= 8 levels per workgroup, but on
 * SwiftShader each workgroup with barriers costs ~0.5 ms, and R / 256 of them ran 60x slower than
 * the one-workgroup kernel this replaces (237 ms against 2.5 ms at 36,864 rows). Three: 6x at
 * 73,728 rows (25 ms, most of it pass 1's 36 workgroups), 1.4x at the default 1,152.
 */
export const whitenKernel = withScratchCheck(whitenStages, whitenScratch);
