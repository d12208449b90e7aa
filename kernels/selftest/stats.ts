/**
 * Self-test of stats (stats.wgsl: statsChunks per chunk of whole trajectories, then statsCombine) against
 * statsCpu (from tests/gpu/stats.gpu.test.ts), on one chunk, a chunk edge (257 trajectories of one
 * row: 256 + 1), 1,152 and 9,216 rows (1 and 5 chunks), binary and all-equal rewards, variable group sizes with padding
 * rows, histogram-edge values and log-ratios past the ±20 clamp.
 * Tolerances: the token count and the histogram bins exactly (u32 counters in both passes; histBin
 * rounds like the GPU); the means, std, ratio min/max and ESS with atol 1e-6, rtol 1e-5, as each f32
 * sum is a short run per thread and two 8-level trees per pass, a few ulps of the total.
 */
import { ADV_ZERO_TOL } from '../stats/histograms';
import { createRng } from '../rng';
import { packTrajIn } from '../advantage/advantage';
import { PPO_ROW_WORDS } from '../loss/ppoLoss';
import {
  decodeStats,
  STATS_FIELDS,
  STATS_WORDS,
  statsChunks,
  statsCombineKernel,
  statsCpu,
  statsKernel,
  statsPartialKernel,
  type StatsConfig,
  type StatsInput,
} from '../stats/stats';
import { CONFIG_SELECTORS } from '../selectors';
import { dispatch, exact, withScratch, type SelfTestCase } from './harness';

/** stats as the hardware variant binds it (the table's picks do not depend on the shape). */
const HW_SHAPE = { vocab: 19, group: 8 };
const HARDWARE_LAYOUT = {
  spreadBins: CONFIG_SELECTORS.statsSpreadBins.pick('subgroup', HW_SHAPE),
  histCopies: CONFIG_SELECTORS.statsHistCopies.pick('subgroup', HW_SHAPE),
};

export interface StatsInputOptions {
  maskP?: number;
  spread?: number;
  rewards?: 'normal' | 'binary' | 'equal';
  edges?: boolean;
  /** Group sizes (variable, as DARS makes them); rows past their sum are padding (no turns). */
  sizes?: number[];
}

/** Groups as runs of rows: each row's group start and size, and its turns (0 = a padding row). */
function groupsOf(N: number, group: number, sizes?: number[]) {
  const groupStart = new Uint32Array(N);
  const groupSize = new Uint32Array(N).fill(1);
  const turns = new Uint32Array(N);
  const list = sizes ?? Array.from({ length: Math.floor(N / group) }, () => group);
  let n = 0;
  for (const size of list) {
    for (let k = 0; k < size; k++) {
      groupStart[n + k] = n;
      groupSize[n + k] = size;
      turns[n + k] = 1 + ((n + k) % 3);
    }
    n += size;
  }
  for (; n < N; n++) groupStart[n] = n;
  return { groupStart, groupSize, turns };
}

/** The kernel's packed inputs besides the per-row arrays: the PpoRow rows and the TrajIn rows. */
export function statsPacked(x: StatsInput): { ppo: Float32Array; traj: Uint32Array } {
  const R = x.mask.length;
  // [R, PPO_ROW_WORDS]: loss, ratio, kl (f32), clip (i32) per row.
  const buf = new ArrayBuffer(Math.max(16, R * 4 * PPO_ROW_WORDS));
  const pf = new Float32Array(buf);
  const pi = new Int32Array(buf);
  for (let i = 0; i < R; i++) {
    pf[PPO_ROW_WORDS * i] = x.loss[i]!;
    pf[PPO_ROW_WORDS * i + 1] = Math.exp(Math.min(Math.max(x.logp[i]! - x.logpOld[i]!, -20), 20));
    pf[PPO_ROW_WORDS * i + 2] = x.kl[i]!;
    pi[PPO_ROW_WORDS * i + 3] = x.clip[i]!;
  }
  return { ppo: pf, traj: packTrajIn({ reward: x.rewards, groupStart: x.groupStart, groupSize: x.groupSize, turns: x.turns }) };
}

/** "1 chunk" or "5 chunks": pass 1's chunks of N trajectories of tp rows, for the case labels. */
function chunkCount(N: number, tp: number): string {
  const n = statsChunks(N, tp).chunks;
  return `${n} chunk${n === 1 ? '' : 's'}`;
}

/** adv_zero_frac's edge: ADV_ZERO_TOL as an f32 (counted as zero) and the next f32 up (not counted). */
export function advZeroEdges(): [number, number] {
  const tol = Math.fround(ADV_ZERO_TOL);
  return [tol, new Float32Array(Uint32Array.of(new Uint32Array(Float32Array.of(tol).buffer)[0]! + 1).buffer)[0]!];
}

/** N trajectories of Tp policy rows in groups of `group`, seeded; the GPU test's generator. */
export function makeStatsInput(N: number, group: number, Tp: number, seed: number, o: StatsInputOptions = {}): StatsInput {
  const rng = createRng(seed);
  const R = N * Tp;
  const mask = Float32Array.from({ length: R }, () => (rng.next() < (o.maskP ?? 0.8) ? 1 : 0));
  const [tol, aboveTol] = advZeroEdges();
  const edgeVals = [-3, 3, 0, 0.25, -0.25, 2.999, -3.5, 1e-9, tol, -tol, aboveTol];
  const adv = Float32Array.from({ length: R }, (_, i) =>
    mask[i] === 0 ? 0 : o.edges && i % 3 === 0 ? edgeVals[i % edgeVals.length]! : rng.next() < 0.1 ? 0 : rng.normal() * 1.5,
  );
  const logpOld = Float32Array.from({ length: R }, () => -Math.abs(rng.normal()) * 3);
  const lrEdges = [0.5, -0.5, 0, 0.25, 1 / 24, -1 / 24, 25, -25];
  const logp = Float32Array.from(logpOld, (x, i) =>
    o.edges && i % 4 === 0 ? x + lrEdges[i % lrEdges.length]! : x + rng.normal() * (o.spread ?? 0.2),
  );
  const rewards = Float32Array.from({ length: N }, (_, n) =>
    o.rewards === 'binary' ? rng.int(2) : o.rewards === 'equal' ? 0.1 * (1 + Math.floor(n / group)) : rng.normal(),
  );
  return {
    mask,
    adv,
    logp,
    logpOld,
    entropy: Float32Array.from({ length: R }, () => rng.next() * 3),
    kl: Float32Array.from({ length: R }, () => rng.next() * 0.1),
    clip: Int32Array.from({ length: R }, (_, i) => (mask[i] === 0 ? 0 : [-1, 0, 0, 1][rng.int(4)]!)),
    loss: Float32Array.from({ length: R }, (_, i) => (mask[i] === 0 ? 0 : rng.normal() * 0.01)),
    rewards,
    ...groupsOf(N, group, o.sizes),
    Tp,
    minibatches: 1 + rng.int(3),
  };
}

function statsCase(name: string, input: () => StatsInput, layout: Pick<StatsConfig, 'spreadBins' | 'histCopies'> = {}): SelfTestCase {
  return {
    // Listed under pass 1's pipeline; pass 2 (statsCombine) is compiled and checked with it.
    kernel: statsPartialKernel,
    uses: [statsCombineKernel],
    name,
    run: (device) =>
      withScratch(device, async (s) => {
        const x = input();
        const config = { numTraj: x.rewards.length, tp: x.Tp, minibatches: x.minibatches, ...layout };
        const ref = statsCpu(x);
        const packed = statsPacked(x);
        const k = s.kernel(statsKernel.create(device));
        const out = s.empty(STATS_WORDS);
        const call = k.bind(
          {
            mask: s.upload(x.mask), adv: s.upload(x.adv), logp: s.upload(x.logp), logpOld: s.upload(x.logpOld),
            entropy: s.upload(x.entropy), ppo: s.upload(packed.ppo), traj: s.upload(packed.traj),
            partials: s.empty(statsKernel.scratchWords(config)), out,
          },
          config,
        );
        dispatch(device, [[k, call]]);
        const got = decodeStats(await s.readF32(out, STATS_WORDS));
        const scalars = STATS_FIELDS.filter((f) => f !== 'tokens');
        return [
          {
            output: 'tokens, adv_hist, ratio_hist',
            actual: [got.tokens, ...got.adv_hist, ...got.ratio_hist],
            expected: [ref.tokens, ...ref.adv_hist, ...ref.ratio_hist],
            tol: exact('u32 counters in both passes; bins computed with the same f32 roundings'),
          },
          {
            output: `${scalars.length} scalars`,
            actual: scalars.map((f) => got[f]),
            expected: scalars.map((f) => ref[f]),
            tol: { atol: 1e-6, rtol: 1e-5, why: 'f32 sums (short runs, then trees, per chunk and over chunks) against float64 sums' },
          },
        ];
      }),
  };
}

export const statsCases: SelfTestCase[] = [
  statsCase('rows 257 (N 257, group 1)', () => makeStatsInput(257, 1, 1, 257)),
  statsCase(`rows 1152 (N 128, group 8, Tp 9): ${chunkCount(128, 9)}`, () => makeStatsInput(128, 8, 9, 1152)),
  statsCase(`rows 9216 (N 1024, group 8, Tp 9): ${chunkCount(1024, 9)}`, () => makeStatsInput(1024, 8, 9, 9216)),
  statsCase('binary rewards, rows 255', () => makeStatsInput(15, 5, 17, 256, { rewards: 'binary' })),
  statsCase('empty mask', () => makeStatsInput(16, 4, 5, 3, { maskP: 0 })),
  statsCase('all-equal rewards in every group', () => makeStatsInput(24, 6, 3, 4, { rewards: 'equal' })),
  statsCase('variable group sizes with padding rows', () => makeStatsInput(40, 8, 4, 8, { sizes: [8, 11, 1, 16], rewards: 'binary' })),
  statsCase('values on histogram edges', () => makeStatsInput(64, 8, 6, 6, { edges: true })),
  statsCase('log-ratios past the ±20 clamp', () => makeStatsInput(40, 4, 6, 7, { spread: 30 })),
  // As the hardware variant runs it: pass 1's histograms in copies, pass 2's bins in workgroups of
  // their own (kernels/selectors.ts).
  statsCase(`the hardware layout, rows 9216: ${chunkCount(1024, 9)}`, () => makeStatsInput(1024, 8, 9, 9217), HARDWARE_LAYOUT),
  statsCase('the hardware layout, values on histogram edges', () => makeStatsInput(64, 8, 6, 6, { edges: true }), HARDWARE_LAYOUT),
  statsCase('the hardware layout, binary rewards, rows 255', () => makeStatsInput(15, 5, 17, 256, { rewards: 'binary' }), HARDWARE_LAYOUT),
];
