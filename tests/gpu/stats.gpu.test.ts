/**
 * stats.wgsl vs statsCpu (kernels/stats.ts). Token counts and histogram bins must match exactly
 * (u32 atomics; histBin rounds like the GPU). Means and the ESS: rtol 1e-5, atol 1e-6, as f32 tree
 * sums over up to ~1000 rows differ from float64 sums by a few ulps of the total; ratio min/max
 * are one f32 exp of a log-ratio up to 20 (rtol 1e-5).
 */
import { describe, expect, it } from 'vitest';
import { PPO_ROW_WORDS } from '../../kernels/ppoLoss';
import { decodeStats, STATS_FIELDS, STATS_WORDS, statsCpu, statsKernel, type StatsInput } from '../../kernels/stats';
import { createRng } from '../../workers/rng';
import { expectClose, expectEqualArrays } from '../helpers/expectClose';
import { GpuScratch, runCalls, withValidation } from '../helpers/gpuBuffers';
import { requireGpu } from '../helpers/requireGpu';

interface Opts {
  maskP?: number;
  spread?: number;
  rewards?: 'normal' | 'binary' | 'equal';
  edges?: boolean;
  /** Group sizes (variable, as DARS makes them); rows past their sum are padding (no turns). */
  sizes?: number[];
}

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

/** TrajIn rows as stats.wgsl reads them: reward (f32 bits), groupStart, groupSize, turns. */
function packTraj(s: StatsInput): Uint32Array {
  const N = s.rewards.length;
  const words = new Uint32Array(4 * N);
  const f = new Float32Array(words.buffer);
  for (let n = 0; n < N; n++) {
    f[4 * n] = s.rewards[n]!;
    words[4 * n + 1] = s.groupStart[n]!;
    words[4 * n + 2] = s.groupSize[n]!;
    words[4 * n + 3] = s.turns[n]!;
  }
  return words;
}

function makeInput(N: number, group: number, Tp: number, seed: number, o: Opts = {}): StatsInput {
  const rng = createRng(seed);
  const R = N * Tp;
  const mask = Float32Array.from({ length: R }, () => (rng.next() < (o.maskP ?? 0.8) ? 1 : 0));
  const edgeVals = [-3, 3, 0, 0.25, -0.25, 2.999, -3.5, 1e-9];
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

async function check(s: StatsInput, name: string) {
  const device = await requireGpu();
  const R = s.mask.length;
  const N = s.rewards.length;
  const ref = statsCpu(s);
  const words = await withValidation(device, async () => {
    const g = new GpuScratch(device);
    const kernel = statsKernel.create(device);
    const ppo = new ArrayBuffer(Math.max(16, R * 4 * PPO_ROW_WORDS));
    const pf = new Float32Array(ppo);
    const pi = new Int32Array(ppo);
    for (let i = 0; i < R; i++) {
      pf[4 * i] = s.loss[i]!;
      pf[4 * i + 1] = Math.exp(Math.min(Math.max(s.logp[i]! - s.logpOld[i]!, -20), 20));
      pf[4 * i + 2] = s.kl[i]!;
      pi[4 * i + 3] = s.clip[i]!;
    }
    const out = g.empty(STATS_WORDS);
    const call = kernel.bind(
      {
        mask: g.upload(s.mask), adv: g.upload(s.adv), logp: g.upload(s.logp), logpOld: g.upload(s.logpOld),
        entropy: g.upload(s.entropy), ppo: g.upload(pf), traj: g.upload(packTraj(s)), out,
      },
      { numTraj: N, tp: s.Tp, minibatches: s.minibatches },
    );
    runCalls(device, [[kernel, call]]);
    const res = await g.readF32(out, STATS_WORDS);
    g.destroy();
    kernel.destroy();
    return res;
  });
  const got = decodeStats(words);
  expect(got.tokens, `${name} tokens`).toBe(ref.tokens);
  expectEqualArrays(got.adv_hist, ref.adv_hist, `${name} adv_hist`);
  expectEqualArrays(got.ratio_hist, ref.ratio_hist, `${name} ratio_hist`);
  const scalars = STATS_FIELDS.filter((f) => f !== 'tokens');
  expectClose(
    scalars.map((f) => got[f]),
    scalars.map((f) => ref[f]),
    { atol: 1e-6, rtol: 1e-5, label: `stats ${name} (${scalars.length} scalars)` },
  );
  return { got, ref };
}

describe('stats.wgsl matches statsCpu', () => {
  // Rows N * Tp at 1, 255, 256, 257, 123 and 1152 (the kernel runs one 256-thread workgroup).
  const cases: Array<[number, number, number]> = [
    [1, 1, 1],
    [15, 5, 17],
    [32, 4, 8],
    [257, 1, 1],
    [41, 41, 3],
    [128, 8, 9],
  ];
  for (const [N, G, Tp] of cases) {
    it(`rows = ${N * Tp} (N ${N}, group ${G}, Tp ${Tp})`, async () => {
      await check(makeInput(N, G, Tp, N * Tp), `R=${N * Tp}`);
      await check(makeInput(N, G, Tp, N * Tp + 1, { rewards: 'binary' }), `R=${N * Tp} binary`);
    });
  }
  it('empty mask: no tokens, ratio stats default to 1', async () => {
    const { got } = await check(makeInput(16, 4, 5, 3, { maskP: 0 }), 'empty mask');
    expect(got.tokens).toBe(0);
    expect(got.ratio_mean).toBe(1);
  });
  it('all-equal rewards in every group, and group size 1', async () => {
    const { got } = await check(makeInput(24, 6, 3, 4, { rewards: 'equal' }), 'all equal');
    expect(got.groups_all_equal_frac).toBe(1);
    await check(makeInput(24, 1, 3, 5), 'group 1');
  });
  it('variable group sizes with padding rows (DARS), which count neither as groups nor in the ESS', async () => {
    const { got, ref } = await check(makeInput(40, 8, 4, 8, { sizes: [8, 11, 1, 16], rewards: 'binary' }), 'variable groups');
    expect(got.groups_all_equal_frac).toBeCloseTo(ref.groups_all_equal_frac, 6);
    await check(makeInput(12, 4, 4, 9, { sizes: [3, 3], rewards: 'equal' }), 'half padding');
  });
  it('values on histogram edges and log-ratios past the +-20 clamp', async () => {
    await check(makeInput(64, 8, 6, 6, { edges: true }), 'edges');
    await check(makeInput(40, 4, 6, 7, { spread: 30 }), 'past clamp');
  });
});
