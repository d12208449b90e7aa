/**
 * Per-iteration statistics for the charts, reduced on the GPU into one small buffer that is read
 * back once per iteration (kernel `stats.wgsl`: its entry points statsChunks, then statsCombine,
 * over shared declarations). Masked means divide by max(count, 1).
 *   ess = exp(2 LSE(lambda) - LSE(2 lambda)) / N,  lambda_n = sum_t m (l - l_old)  (log space, VCPO)
 * Histograms count masked tokens in HIST_BINS fixed bins; out-of-range values go to the end bins.
 */
import { ADV_HIST_RANGE, ADV_ZERO_TOL, HIST_BINS, LOGRATIO_HIST_RANGE } from './histograms';
import { defineKernel, uniformLayout } from '../pipeline';
import { defineTwoPass } from '../reduce';
import statsWGSL from './stats.wgsl?raw';

export interface StatsInput {
  /** [R] 0/1 loss mask of policy tokens */
  mask: Float32Array;
  /** [R] */
  adv: Float32Array;
  /** [R] current log-probs (last forward of the update) */
  logp: Float32Array;
  /** [R] */
  logpOld: Float32Array;
  /** [R] */
  entropy: Float32Array;
  /** [R] k3 KL estimates */
  kl: Float32Array;
  /** [R] -1/0/1 */
  clip: Int32Array;
  /** [R] weighted token losses of the last epoch */
  loss: Float32Array;
  /** [N] training rewards. */
  rewards: Float32Array;
  /** [N] first row of each row's group and the group's size (groups are runs of rows). */
  groupStart: Uint32Array;
  groupSize: Uint32Array;
  /** [N] turns taken; 0 marks a row without a trajectory (padding, dropped by a filter). */
  turns: Uint32Array;
  /** Policy-token rows per trajectory. */
  Tp: number;
  minibatches: number;
}

export interface StatsOut {
  tokens: number;
  adv_mean: number;
  adv_std: number;
  adv_zero_frac: number;
  ratio_mean: number;
  ratio_min: number;
  ratio_max: number;
  clip_frac_low: number;
  clip_frac_high: number;
  entropy: number;
  kl_ref: number;
  loss: number;
  groups_all_equal_frac: number;
  ess: number;
  adv_hist: number[];
  ratio_hist: number[];
}

/**
 * The bin of x, rounded step by step to f32 exactly as stats.wgsl computes it: (x - lo) and the
 * product with the scale (an f32-exact constant, 24 or 4 here) are each rounded, so values just
 * below an edge land in the same bin on both backends (f32(y * 24) can round up to the edge).
 */
export function histBin(x: number, lo: number, hi: number, bins = HIST_BINS): number {
  const t = Math.floor(Math.fround(Math.fround(Math.fround(x) - lo) * Math.fround(bins / (hi - lo))));
  return Math.min(Math.max(t, 0), bins - 1);
}

/** ADV_ZERO_TOL as the f32 stats.wgsl compares with, so that both backends count the same advantages. */
const ADV_ZERO_TOL_F32 = Math.fround(ADV_ZERO_TOL);

export function clampLogRatio(d: number): number {
  return Math.min(Math.max(d, -20), 20);
}

export function statsCpu(s: StatsInput): StatsOut {
  const R = s.mask.length;
  const N = s.rewards.length;
  let count = 0;
  let advSum = 0;
  let zero = 0;
  let rSum = 0;
  let rMin = Infinity;
  let rMax = -Infinity;
  let low = 0;
  let high = 0;
  let ent = 0;
  let kl = 0;
  let loss = 0;
  const advHist = new Array<number>(HIST_BINS).fill(0);
  const ratioHist = new Array<number>(HIST_BINS).fill(0);
  for (let i = 0; i < R; i++) {
    loss += s.loss[i]!;
    if (s.mask[i] === 0) continue;
    count++;
    const a = s.adv[i]!;
    advSum += a;
    if (Math.abs(a) <= ADV_ZERO_TOL_F32) zero++;
    const lr = clampLogRatio(s.logp[i]! - s.logpOld[i]!);
    const r = Math.exp(lr);
    rSum += r;
    rMin = Math.min(rMin, r);
    rMax = Math.max(rMax, r);
    if (s.clip[i] === -1) low++;
    if (s.clip[i] === 1) high++;
    ent += s.entropy[i]!;
    kl += s.kl[i]!;
    advHist[histBin(a, ADV_HIST_RANGE[0], ADV_HIST_RANGE[1])]!++;
    ratioHist[histBin(lr, LOGRATIO_HIST_RANGE[0], LOGRATIO_HIST_RANGE[1])]!++;
  }
  const c = Math.max(count, 1);
  const advMean = advSum / c;
  let advVar = 0;
  for (let i = 0; i < R; i++) if (s.mask[i] !== 0) advVar += (s.adv[i]! - advMean) ** 2;

  let equal = 0;
  let groups = 0;
  let live = 0;
  for (let n = 0; n < N; n++) {
    if (!s.turns[n]) continue;
    live++;
    if (s.groupStart[n] !== n) continue;
    groups++;
    let same = 1;
    for (let k = 1; k < s.groupSize[n]!; k++) if (s.rewards[n + k] !== s.rewards[n]) same = 0;
    equal += same;
  }

  // ESS of sequence IS weights, all in log space.
  const lam = new Float64Array(N);
  for (let n = 0; n < N; n++) {
    let acc = 0;
    for (let j = 0; j < s.Tp; j++) {
      const i = n * s.Tp + j;
      if (s.mask[i] !== 0) acc += clampLogRatio(s.logp[i]! - s.logpOld[i]!);
    }
    lam[n] = acc;
  }
  const lse = (scale: number): number => {
    let m = -Infinity;
    for (let n = 0; n < N; n++) if (s.turns[n]) m = Math.max(m, scale * lam[n]!);
    let t = 0;
    for (let n = 0; n < N; n++) if (s.turns[n]) t += Math.exp(scale * lam[n]! - m);
    return m + Math.log(t);
  };
  const ess = live > 0 ? Math.exp(2 * lse(1) - lse(2)) / live : 1;

  return {
    tokens: count,
    adv_mean: advMean,
    adv_std: Math.sqrt(advVar / c),
    adv_zero_frac: zero / c,
    ratio_mean: count ? rSum / c : 1,
    ratio_min: count ? rMin : 1,
    ratio_max: count ? rMax : 1,
    clip_frac_low: low / c,
    clip_frac_high: high / c,
    entropy: ent / c,
    kl_ref: kl / c,
    loss: loss / s.minibatches,
    groups_all_equal_frac: groups ? equal / groups : 0,
    ess,
    adv_hist: advHist,
    ratio_hist: ratioHist,
  };
}

export const STATS_WORKGROUP_SIZE = 256;
/**
 * Rows a chunk of pass 1 aims at (8 per thread): whole trajectories, at most one per thread. 1152
 * rows of 9 make 1 chunk, 73,728 make 37, 589,824 make 289; a trajectory longer than this is a
 * chunk of its own. Pass 1 keeps this many rows of its chunk in workgroup memory, in its trees'
 * arrays (CHUNK_ROWS in stats.wgsl, 8 KiB).
 *
 * It was 512 (2 rows per thread) until the H200 measured pass 1 at 36 us for 589,824 rows, 11 % of
 * a copy: 1,171 workgroups of 256 threads, each a chain of loads, trees and a second walk that
 * moves 2 rows per thread, so the kernel took about the chain times the rounds of workgroups the
 * GPU could hold at once. With 2,048 rows a chunk the same work is 289 chains of 8 rows per thread,
 * loads issued four rows at a time; not yet timed on a GPU (the kernel bench's row `statsChunk512`
 * keeps 512 to compare). On SwiftShader, which runs workgroups one after another, the kernel went
 * from 38.7 to 14.2 ms at 9,216 rows and from 191 to 59 ms at 73,728 (BENCHMARKS.md).
 */
export const STATS_CHUNK_ROWS = 8 * STATS_WORKGROUP_SIZE;
/** 4-byte words of one `struct StatsChunk` (stats.wgsl): 7 counters, 12 floats, 2 histograms. */
export const STATS_CHUNK_WORDS = 7 + 12 + 2 * HIST_BINS;

/** Scalar slots of the stats output, in the order of the STAT_* constants in stats.wgsl. */
export const STATS_FIELDS = [
  'tokens', 'adv_mean', 'adv_std', 'adv_zero_frac', 'ratio_mean', 'ratio_min', 'ratio_max',
  'clip_frac_low', 'clip_frac_high', 'entropy', 'kl_ref', 'loss', 'groups_all_equal_frac', 'ess',
] as const satisfies ReadonlyArray<keyof StatsOut>;

/** f32 words of the stats output: the scalars, then adv_hist, then ratio_hist. */
export const STATS_WORDS = STATS_FIELDS.length + 2 * HIST_BINS;

export function decodeStats(words: Float32Array): StatsOut {
  const out = {} as Record<string, number | number[]>;
  STATS_FIELDS.forEach((name, i) => (out[name] = words[i]!));
  const k = STATS_FIELDS.length;
  out.adv_hist = Array.from(words.subarray(k, k + HIST_BINS));
  out.ratio_hist = Array.from(words.subarray(k + HIST_BINS, k + 2 * HIST_BINS));
  return out as unknown as StatsOut;
}

/** `struct Stats` of stats.wgsl (both passes bind it). */
export const STATS_UNIFORM = uniformLayout('Stats', [
  ['numTraj', 'u32'], ['tp', 'u32'], ['trajPerChunk', 'u32'], ['chunks', 'u32'], ['minibatches', 'u32'],
  ['advLo', 'f32'], ['advScale', 'f32'], ['ratioLo', 'f32'], ['ratioScale', 'f32'],
  ['spreadBins', 'u32'], // pass 2: histogram bins in workgroups of their own (StatsConfig.spreadBins)
] as const);

export interface StatsConfig {
  /** Trajectories N; rows are N * tp. */
  numTraj: number;
  tp: number;
  minibatches: number;
  /**
   * Pass 2 adds up the histogram bins in workgroups of their own (STATS_COMBINE_WORKGROUPS in
   * all) instead of in its one workgroup: the hardware layout (kernels/selectors.ts statsSpreadBins). Same results
   * bit for bit either way (the bins are exact u32 sums).
   */
  spreadBins?: boolean;
  /** Rows a chunk of pass 1 aims at: STATS_CHUNK_ROWS unless a benchmark compares another. */
  chunkRows?: number;
  /**
   * Copies of each histogram in pass 1's workgroup memory, that its threads take turns at (1 to
   * STATS_MAX_HIST_COPIES; default 1): the hardware layout (kernels/selectors.ts statsHistCopies). Same results bit
   * for bit (exact u32 counts); a value compiles a pipeline of its own.
   */
  histCopies?: number;
}

/** Most histogram copies pass 1's workgroup memory has room for next to its trees (stats.wgsl). */
export const STATS_MAX_HIST_COPIES = 16;

/**
 * How pass 1 cuts the trajectories into chunks: a function of N, tp and the chunk's target rows
 * only, which fixes every summation order. At most one trajectory per thread, so each thread's lam
 * stays in a register.
 */
export function statsChunks(numTraj: number, tp: number, chunkRows = STATS_CHUNK_ROWS): { trajPerChunk: number; chunks: number } {
  const trajPerChunk = Math.min(STATS_WORKGROUP_SIZE, Math.max(1, Math.floor(chunkRows / Math.max(tp, 1))));
  return { trajPerChunk, chunks: Math.ceil(numTraj / trajPerChunk) };
}

const statsValues = (c: StatsConfig) => ({
  numTraj: c.numTraj, tp: c.tp, ...statsChunks(c.numTraj, c.tp, c.chunkRows), minibatches: c.minibatches,
  advLo: ADV_HIST_RANGE[0], advScale: HIST_BINS / (ADV_HIST_RANGE[1] - ADV_HIST_RANGE[0]),
  ratioLo: LOGRATIO_HIST_RANGE[0], ratioScale: HIST_BINS / (LOGRATIO_HIST_RANGE[1] - LOGRATIO_HIST_RANGE[0]),
  spreadBins: c.spreadBins ? 1 : 0,
});

const checkBins = () => {
  if (HIST_BINS !== 24) throw new Error('stats: stats.wgsl is compiled for 24 histogram bins');
};

/** stats.wgsl with the constants the host fixes: both passes compile this one source. */
const STATS_SOURCE = `${statsWGSL}
const CHUNK_ROWS: u32 = ${STATS_CHUNK_ROWS}u;
const ADV_ZERO_TOL: f32 = ${ADV_ZERO_TOL};
`;

/**
 * Pass 1 of stats, a workgroup per chunk of whole trajectories: buffers mask, adv, logp, logpOld,
 * entropy, ppo (ppoLoss's PpoRow output), traj (advantage.ts's TrajIn rows) and partials
 * ([chunks] StatsChunk records).
 */
export const statsPartialKernel = defineKernel({
  label: 'stats',
  wgsl: STATS_SOURCE,
  entryPoint: 'statsChunks',
  workgroupSize: STATS_WORKGROUP_SIZE,
  bindings: ['mask', 'adv', 'logp', 'logpOld', 'entropy', 'ppo', 'traj', 'partials'],
  uniform: STATS_UNIFORM,
  check: checkBins,
  values: statsValues,
  specialize: (c: StatsConfig): Record<string, number> => {
    const histCopies = c.histCopies ?? 1;
    if (!(Number.isInteger(histCopies) && histCopies >= 1 && histCopies <= STATS_MAX_HIST_COPIES)) {
      throw new Error(`stats: ${histCopies} histogram copies is outside 1..${STATS_MAX_HIST_COPIES}`);
    }
    // One copy is the WGSL default: no constant, the same pipeline as compile.gpu.test.ts's check.
    return histCopies === 1 ? {} : { histCopies };
  },
  workgroups: (c: StatsConfig) => statsChunks(c.numTraj, c.tp, c.chunkRows).chunks,
});

/** Pass 2's workgroups with spreadBins: the scalars, then the histogram bins four per workgroup (stats.wgsl statsCombine). */
export const STATS_COMBINE_WORKGROUPS = 1 + (2 * HIST_BINS) / 4;

/**
 * Pass 2 of stats, one workgroup (STATS_COMBINE_WORKGROUPS with spreadBins): buffers partials and
 * out [STATS_WORDS] f32 (decodeStats reads it).
 */
export const statsCombineKernel = defineKernel({
  label: 'statsCombine',
  wgsl: STATS_SOURCE,
  file: 'stats',
  entryPoint: 'statsCombine',
  workgroupSize: STATS_WORKGROUP_SIZE,
  bindings: { partials: 8, out: 9 },
  uniform: STATS_UNIFORM,
  check: checkBins,
  values: statsValues,
  workgroups: (c: StatsConfig) => (c.spreadBins ? STATS_COMBINE_WORKGROUPS : 1),
});

/**
 * statsCpu on the GPU, two dispatches (kernels/reduce.ts defineTwoPass): pass 1's buffers, out,
 * and partials (scratch of at least `statsKernel.scratchWords(config)` words). Counts and bins
 * are exact; the sums are f32 in an order fixed by N and tp, the same bits on every run.
 */
export const statsKernel = defineTwoPass({
  label: 'stats',
  partial: statsPartialKernel,
  combine: statsCombineKernel,
  combineConfig: (c: StatsConfig) => c,
  // One record even without trajectories: a runtime-sized array binding holds at least one.
  scratchWords: (c: StatsConfig) => Math.max(1, statsChunks(c.numTraj, c.tp, c.chunkRows).chunks) * STATS_CHUNK_WORDS,
});
