/**
 * PPO's critic in the toy (docs/METHODS.md 4.1, "an extra table V[s]"): a value table indexed by a
 * state key per policy row (the trainer hashes the tokens the policy sees into the table), GAE
 * advantages and returns from it (kernel `critic.wgsl gae`, verl `compute_gae_advantage_return`, with the
 * outcome reward on each trajectory's last policy token), and the table's update toward the mean
 * return of the rows that visited each entry (kernel `critic.wgsl criticUpdate`: its entry points criticChunks, then criticApply).
 */
import criticWGSL from './critic.wgsl?raw';
import { defineKernel, uniformLayout } from '../pipeline';
import { defineTwoPass, rowChunks, type ChunkLayout } from '../reduce';

export interface GaeOptions {
  gamma: number;
  lambda: number;
}

/** [adv, returns] per row [N * Tp] (float64 math, f32 results). */
export function gaeCpu(
  critic: Float32Array,
  stateKey: Uint32Array,
  mask: Float32Array,
  reward: Float32Array,
  Tp: number,
  o: GaeOptions,
): { adv: Float32Array; ret: Float32Array } {
  const N = reward.length;
  const adv = new Float32Array(N * Tp);
  const ret = new Float32Array(N * Tp);
  for (let n = 0; n < N; n++) {
    let last = -1;
    for (let j = 0; j < Tp; j++) if (mask[n * Tp + j]) last = j;
    let vNext = 0;
    let aNext = 0;
    for (let j = last; j >= 0; j--) {
      const i = n * Tp + j;
      if (!mask[i]) continue;
      const v = critic[stateKey[i]!]!;
      const r = j === last ? reward[n]! : 0;
      // f32 at each step, as the kernel computes.
      const delta = Math.fround(Math.fround(r + Math.fround(o.gamma * vNext)) - v);
      const a = Math.fround(delta + Math.fround(Math.fround(o.gamma * o.lambda) * aNext));
      adv[i] = a;
      ret[i] = Math.fround(a + v);
      vNext = v;
      aNext = a;
    }
  }
  return { adv, ret };
}

/** Updates `critic` in place: each visited entry moves lr of the way to its rows' mean return. */
export function criticUpdateCpu(critic: Float32Array, stateKey: Uint32Array, mask: Float32Array, ret: Float32Array, lr: number): void {
  const sum = new Float64Array(critic.length);
  const count = new Float64Array(critic.length);
  for (let i = 0; i < mask.length; i++) {
    if (!mask[i]) continue;
    sum[stateKey[i]!]! += ret[i]!;
    count[stateKey[i]!]!++;
  }
  for (let k = 0; k < critic.length; k++) if (count[k]) critic[k] = critic[k]! + lr * (sum[k]! / count[k]! - critic[k]!);
}

export const GAE_UNIFORM = uniformLayout('Gae', [['numTraj', 'u32'], ['tp', 'u32'], ['gamma', 'f32'], ['lambda', 'f32']] as const);

/** `struct CriticUpdate` of critic.wgsl criticUpdate. */
export const CRITIC_UPDATE_UNIFORM = uniformLayout('CriticUpdate', [
  ['tableSize', 'u32'], ['numRows', 'u32'], ['rowsPerChunk', 'u32'], ['chunks', 'u32'], ['lr', 'f32'],
] as const);

/** The uniform structs of critic.wgsl: GAE's and the critic update's. */
const CRITIC_UNIFORMS = [GAE_UNIFORM, CRITIC_UPDATE_UNIFORM];

type GaeConfig = { numTraj: number; tp: number } & GaeOptions;

/** gaeCpu on the GPU: buffers critic, stateKey, mask, trajIn (advantage.ts packTrajIn), adv and ret (outputs). */
export const gaeKernel = defineKernel({
  label: 'gae',
  wgsl: criticWGSL,
  fileUniforms: CRITIC_UNIFORMS,
  file: 'critic',
  entryPoint: 'gae',
  workgroupSize: 64,
  bindings: ['critic', 'stateKey', 'mask', 'trajIn', 'adv', 'ret'],
  uniform: GAE_UNIFORM,
  values: (c: GaeConfig) => ({ numTraj: c.numTraj, tp: c.tp, gamma: c.gamma, lambda: c.lambda }),
  workgroups: (c: GaeConfig) => Math.ceil(c.numTraj / 64),
});

/**
 * Rows per chunk of the critic's update, at least. A chunk costs a private table of 2C words
 * (C table entries: zeroed in pass 1, read in pass 2) and one invocation's serial walk over its
 * rows; at C = 4096, 256 rows keep that table traffic to at most 32 words per row (plus one table)
 * while there are chunks enough to walk in parallel. Past 256 * 256 rows the chunk grows instead
 * (rowChunks: at most 256 chunks and REDUCE_MAX_SCRATCH_WORDS), so at C = 4096 the scratch never
 * passes 256 * 2 * 4096 words (8 MiB), and a walk is 256 rows up to 65,536 rows, 2,344 at 600,000.
 */
export const CRITIC_CHUNK_ROWS = 256;

/** How the update cuts `numRows` rows into chunks: a function of the row count and table size only. */
export const criticChunks = (numRows: number, tableSize: number): ChunkLayout => rowChunks(numRows, 2 * tableSize, CRITIC_CHUNK_ROWS);

export interface CriticUpdateConfig {
  tableSize: number;
  numRows: number;
  lr: number;
}

/** Words of the update's scratch `partials` ([chunks, tableSize] of (sum, count)); allocate once per run. */
export const criticUpdateScratchWords = (c: Pick<CriticUpdateConfig, 'tableSize' | 'numRows'>): number =>
  2 * c.tableSize * criticChunks(c.numRows, c.tableSize).chunks;


const criticValues = (c: CriticUpdateConfig) => ({ tableSize: c.tableSize, numRows: c.numRows, lr: c.lr, ...criticChunks(c.numRows, c.tableSize) });

/** Counts are f32: exact up to 2^24 rows per entry. */
const checkCritic = (c: CriticUpdateConfig) => {
  if (c.numRows > 2 ** 24) throw new Error(`criticUpdate: ${c.numRows} rows, at most 2^24 (f32 counts)`);
};

/** Pass 1: buffers stateKey, mask, ret [numRows], partials (scratch); one workgroup per row chunk. */
export const criticPartialKernel = defineKernel({
  label: 'criticUpdate',
  wgsl: criticWGSL,
  fileUniforms: CRITIC_UNIFORMS,
  file: 'critic',
  entryPoint: 'criticChunks',
  workgroupSize: 64,
  bindings: { stateKey: 2, mask: 3, ret: 6, partials: 7 },
  uniform: CRITIC_UPDATE_UNIFORM,
  values: criticValues,
  workgroups: (c: CriticUpdateConfig) => criticChunks(c.numRows, c.tableSize).chunks,
  check: checkCritic,
});

/** Pass 2: buffers partials, critic [tableSize] (updated); one invocation per table entry. */
export const criticApplyKernel = defineKernel({
  label: 'criticApply',
  wgsl: criticWGSL,
  fileUniforms: CRITIC_UNIFORMS,
  file: 'critic',
  entryPoint: 'criticApply',
  workgroupSize: 64,
  bindings: { partials: 7, critic: 1 },
  uniform: CRITIC_UPDATE_UNIFORM,
  values: criticValues,
  workgroups: (c: CriticUpdateConfig) => Math.ceil(c.tableSize / 64),
  check: checkCritic,
});

/**
 * criticUpdateCpu on the GPU, two dispatches (kernels/reduce.ts defineTwoPass): buffers stateKey,
 * mask, ret [numRows], partials (scratch of at least `criticUpdateScratchWords(config)` words, any
 * contents) and critic [tableSize] (updated). Work numRows + chunks * tableSize, where one scan of
 * every row per entry was tableSize * numRows. Each entry's sum runs in row order within a chunk,
 * then in chunk order: the same bits every run, within f32 rounding of about (its rows in one
 * chunk + chunks) additions of the float64 reference (selftest/critic.ts criticUpdateTolerance).
 */
export const criticUpdateKernel = defineTwoPass({
  label: 'criticUpdate',
  partial: criticPartialKernel,
  combine: criticApplyKernel,
  combineConfig: (c: CriticUpdateConfig) => c,
  scratchWords: criticUpdateScratchWords,
});
