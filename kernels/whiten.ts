/**
 * Masked batch whitening in place (verl `masked_whiten`, used by REINFORCE++ and PPO, METHODS.md
 * 4.7): over the masked rows,
 *   mean = sum m A / sum m,  var = sum m (A - mean)^2 / (sum m - 1)   (unbiased, as verl)
 *   A <- (A - mean) / sqrt(var + 1e-8)
 * With one masked row (verl raises) A - mean is kept; unmasked rows become 0.
 *
 * The GPU runs three dispatches (kernels/stages.ts), deterministic without atomics:
 *   whiten.wgsl:        the rows are cut into `blocks` fixed blocks (whitenBlocks, a function of
 *                       the row count alone); a workgroup per block writes the block's masked
 *                       moments (count, mean as pivot + offset, M2) into the caller's scratch
 *                       buffer `partials`;
 *   whitenCombine.wgsl: one workgroup merges the block moments by Chan's formula in a fixed tree
 *                       and writes mean and sd after them;
 *   whitenApply.wgsl:   a thread per row whitens it.
 * Shared WGSL: whitenMoments.wgsl. The hardware variant merges the last two (whitenMergedKernel),
 * and where the advantage or GAE kernel does pass 1 while writing the rows (WHITEN_FOLD_HOOKS),
 * whitens in one dispatch (whitenFoldApplyKernel).
 */
import { defineKernel, uniformLayout, type BufferArg, type DefinedKernel } from './pipeline';
import { defineStages, withScratchCheck, type ScratchSize } from './stages';
import whitenWGSL from './whiten.wgsl?raw';
import whitenApplyWGSL from './whitenApply.wgsl?raw';
import whitenCombineWGSL from './whitenCombine.wgsl?raw';
import whitenFoldApplyWGSL from './whitenFoldApply.wgsl?raw';
import whitenFoldWGSL from './whitenFold.wgsl?raw';
import whitenFoldNoneWGSL from './whitenFoldNone.wgsl?raw';
import whitenMergeApplyWGSL from './whitenMergeApply.wgsl?raw';
import whitenMomentsWGSL from './whitenMoments.wgsl?raw';
import whitenApplyEntryWGSL from './whitenApplyEntry.wgsl?raw';
import type { KernelVariant } from './variant';

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
/** Rows above this would make the f32 row counts of whitenMoments.wgsl inexact. */
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

/** Mirrors `struct Whiten` in whitenMoments.wgsl (all three dispatches bind it). */
export const WHITEN_UNIFORM = uniformLayout([['numRows', 'u32'], ['block', 'u32'], ['blocks', 'u32'], ['treeTop', 'u32']] as const);

const whitenValues = (c: WhitenConfig) => ({ numRows: c.numRows, ...whitenBlocks(c.numRows) });

const checkRows = (c: WhitenConfig) => {
  if (!(Number.isInteger(c.numRows) && c.numRows >= 0 && c.numRows <= WHITEN_MAX_ROWS)) {
    throw new Error(`whiten: ${c.numRows} rows (at most ${WHITEN_MAX_ROWS}: the row counts are f32)`);
  }
};

/** What every dispatch of whitening shares: the workgroup, the uniform and the row-count check. */
const whitenShared = { workgroupSize: WHITEN_WORKGROUP_SIZE, uniform: WHITEN_UNIFORM, check: checkRows, values: whitenValues } as const;

/** Pass 1, a workgroup per block: buffers mask [numRows], adv [numRows] (read), partials. */
export const whitenPartialKernel = defineKernel({
  label: 'whiten',
  wgsl: whitenWGSL + whitenMomentsWGSL,
  ...whitenShared,
  bindings: ['mask', 'adv', 'partials'],
  workgroups: (c: WhitenConfig) => whitenBlocks(c.numRows).blocks,
});

/** The combine, one workgroup (none without rows): buffer partials. */
export const whitenCombineKernel = defineKernel({
  label: 'whitenCombine',
  wgsl: whitenCombineWGSL + whitenMomentsWGSL,
  ...whitenShared,
  bindings: ['partials'],
  workgroups: (c: WhitenConfig) => (c.numRows > 0 ? 1 : 0),
});

/** The rows, a thread each: buffers mask, partials, adv (whitened in place). */
export const whitenApplyKernel = defineKernel({
  label: 'whitenApply',
  wgsl: whitenApplyWGSL + whitenMomentsWGSL,
  ...whitenShared,
  bindings: ['mask', 'partials', 'adv'],
  workgroups: (c: WhitenConfig) => Math.ceil(c.numRows / WHITEN_WORKGROUP_SIZE),
});

/** Rows per workgroup of whitenMergeApply.wgsl: APPLY_ROWS_PER_THREAD (8) a thread. */
export const WHITEN_MERGED_APPLY_ROWS = 8 * WHITEN_WORKGROUP_SIZE;

/** The combine and the rows in one dispatch (hardware variant): buffers mask, partials, adv. */
export const whitenMergeApplyKernel = defineKernel({
  label: 'whitenMergeApply',
  wgsl: whitenMergeApplyWGSL + whitenApplyEntryWGSL + whitenMomentsWGSL,
  ...whitenShared,
  bindings: ['mask', 'partials', 'adv'],
  workgroups: (c: WhitenConfig) => Math.ceil(c.numRows / WHITEN_MERGED_APPLY_ROWS),
});

export type WhitenBuffers = Record<'mask' | 'adv' | 'partials', BufferArg>;

const whitenStages = defineStages<WhitenBuffers, WhitenConfig>('whiten', [whitenPartialKernel, whitenCombineKernel, whitenApplyKernel]);
const whitenMergedStages = defineStages<WhitenBuffers, WhitenConfig>('whitenMerged', [whitenPartialKernel, whitenMergeApplyKernel]);

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

/**
 * whitenKernel in two dispatches, the same bits: pass 1, then whitenMergeApply.wgsl (the merge in
 * every workgroup of 2,048 rows, then the rows). For hardware GPUs, where a dependent dispatch
 * costs more than the tree (whitenMergeApply.wgsl says why); not yet timed on one.
 */
export const whitenMergedKernel = withScratchCheck(whitenMergedStages, whitenScratch);

/**
 * The whitening the backend runs when no producer folds its pass 1 in (workers/gpuKernels.ts
 * whitenFoldProducer: after OTB's baseline): two dispatches in the hardware (subgroup) variant,
 * three elsewhere.
 */
export const whitenKernelFor = (variant: KernelVariant) => (variant === 'subgroup' ? whitenMergedKernel : whitenKernel);

/**
 * Whitening's pass 1 inside the kernel that writes the rows (hardware variant): the WGSL joined
 * after a producer (advantage.wgsl, gaeUnrolled.wgsl), so that each of its workgroups leaves the
 * masked moments of the rows it wrote behind them in its `adv` buffer (whitenFold.wgsl), which
 * then needs whitenFoldAdvWords words. whitenFoldApplyKernel whitens in one dispatch after it.
 */
export const WHITEN_FOLD_HOOKS = whitenFoldWGSL + whitenMomentsWGSL;

/** The same hooks doing nothing, for a producer's own pipelines. */
export { whitenFoldNoneWGSL };

/**
 * Moments records a folding producer leaves for numTraj trajectories: one per workgroup of 64
 * trajectories (advantage.wgsl and gaeUnrolled.wgsl both run a thread per trajectory in
 * workgroups of 64; tests/gpu/whitenFold.gpu.test.ts checks both).
 */
export const WHITEN_FOLD_TRAJ_PER_BLOCK = 64;
export const whitenFoldBlocks = (numTraj: number) => Math.ceil(numTraj / WHITEN_FOLD_TRAJ_PER_BLOCK);
/** Words of `adv` with the moments behind the rows: numRows, then 4 a record. */
export const whitenFoldAdvWords = (numRows: number, blocks: number) => numRows + 4 * blocks;

/**
 * What a folding producer leaves, in float64: whitenStats of each block's rows, a block being
 * WHITEN_FOLD_TRAJ_PER_BLOCK trajectories of tp rows (the last one possibly fewer).
 */
export function whitenFoldMomentsCpu(adv: Float32Array, mask: Float32Array, numTraj: number, tp: number): Array<ReturnType<typeof whitenStats>> {
  return Array.from({ length: whitenFoldBlocks(numTraj) }, (_, b) => {
    const lo = b * WHITEN_FOLD_TRAJ_PER_BLOCK * tp;
    const hi = Math.min(numTraj, (b + 1) * WHITEN_FOLD_TRAJ_PER_BLOCK) * tp;
    return whitenStats(adv.subarray(lo, hi), mask.subarray(lo, hi));
  });
}

/** The records behind the rows of a folding producer's adv (n, pivot, off, m2 each), read as Moments. */
export function unpackFoldMoments(words: Float32Array, blocks: number): Moments[] {
  return Array.from({ length: blocks }, (_, b) => {
    const [n, pivot, off, m2] = words.subarray(4 * b, 4 * b + 4);
    return { count: n!, mean: n ? pivot! + off! : 0, m2: m2! };
  });
}

/**
 * A producer compiled with WHITEN_FOLD_HOOKS, as an operation of one pass whose `adv` buffer is
 * checked for the records' room (whitenFoldAdvWords), refused by name where robust access would
 * drop the records silently.
 */
export function foldingProducer<B extends Record<'adv', BufferArg>, C extends { numTraj: number; tp: number }>(
  label: string,
  pass: DefinedKernel<B, C>,
) {
  return withScratchCheck(
    defineStages<B, C>(label, [pass as DefinedKernel<never, C>]),
    {
      words: (c: C) => whitenFoldAdvWords(c.numTraj * c.tp, whitenFoldBlocks(c.numTraj)),
      needs: (c: C) => `${c.numTraj} trajectories of ${c.tp} rows and their moments need`,
      source: 'whitenFoldAdvWords',
    },
    'adv',
  );
}

export interface WhitenFoldConfig extends WhitenConfig {
  /** Moments records the producer left (whitenFoldBlocks of its trajectories). */
  blocks: number;
}

const whitenFoldApplyPass = defineKernel({
  label: 'whitenFoldApply',
  wgsl: whitenFoldApplyWGSL + whitenApplyEntryWGSL + whitenMomentsWGSL,
  workgroupSize: WHITEN_WORKGROUP_SIZE,
  uniform: WHITEN_UNIFORM,
  check: (c: WhitenFoldConfig) => {
    checkRows(c);
    if (!(Number.isInteger(c.blocks) && c.blocks >= 0)) throw new Error(`whitenFoldApply: ${c.blocks} moments records`);
  },
  values: (c: WhitenFoldConfig) => ({ numRows: c.numRows, block: 0, blocks: c.blocks, treeTop: treeTopFor(Math.min(c.blocks, WHITEN_WORKGROUP_SIZE)) }),
  bindings: ['mask', 'adv'],
  workgroups: (c: WhitenFoldConfig) => Math.ceil(c.numRows / WHITEN_MERGED_APPLY_ROWS),
});

/**
 * Whitening in one dispatch, after a producer compiled with WHITEN_FOLD_HOOKS: buffers mask and
 * adv (whitened in place; the producer's moments records behind its rows, whitenFoldAdvWords
 * words in all, refused by name if smaller). Merges the records in every workgroup, thread t
 * records t, t + 256, ..., then the tree: the same bits on every run, though not whitenKernel's
 * (other blocks, so other rounding of the same sums). Untimed on a GPU: whitening's own pass 1 is
 * a dependent dispatch whose fixed cost alone kept it under half of a copy there (BENCHMARKS.md,
 * eighth session).
 */
export const whitenFoldApplyKernel = withScratchCheck(
  defineStages<Record<'mask' | 'adv', BufferArg>, WhitenFoldConfig>('whitenFoldApply', [whitenFoldApplyPass]),
  {
    words: (c: WhitenFoldConfig) => whitenFoldAdvWords(c.numRows, c.blocks),
    needs: (c: WhitenFoldConfig) => `${c.numRows} rows and ${c.blocks} moments records need`,
    source: 'whitenFoldAdvWords',
  },
  'adv',
);
