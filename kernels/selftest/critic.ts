/**
 * Self-test cases for PPO's critic kernels (as tests/gpu/critic.gpu.test.ts): critic.wgsl gae vs gaeCpu
 * and the critic's update (critic.wgsl criticUpdate per row chunk, then critic.wgsl criticApply) vs
 * criticUpdateCpu. Tolerances: GAE is an f32 recursion the reference rounds step by step the same
 * way, so only fused multiply-adds differ: atol 1e-6, rtol 1e-5. The update is an f32 sum in row
 * order within a chunk, then in chunk order, against a float64 one: criticUpdateTolerance. Entries
 * no row visits must keep their bits exactly.
 */
import { packTrajIn } from '../advantage/advantage';
import { criticApplyKernel, criticChunks, criticPartialKernel, criticUpdateCpu, criticUpdateKernel, gaeCpu, gaeKernel } from '../advantage/critic';
import { createRng } from '../rng';
import { dispatch, exact, withScratch, type Check, type Scratch, type SelfTestCase, type Tolerance } from './harness';

/** The critic's update inputs: the table before, and per row its state, mask and return. */
export interface CriticUpdateInput {
  critic: Float32Array;
  keys: Uint32Array;
  mask: Float32Array;
  ret: Float32Array;
  lr: number;
}

export interface CriticUpdateInputOptions {
  /** Where the rows go: random entries, all on entry 7, or row i on entry i mod size. */
  keys?: 'random' | 'one' | 'spread';
  /** Probability that a row counts (default 0.8; 0: every row masked out). */
  maskP?: number;
  /** Normal returns, or small integers (exact f32 sums in any order). */
  ret?: 'normal' | 'int';
  lr?: number;
}

/** Seeded inputs for `rows` rows and a table of `size` entries. */
export function criticUpdateInput(rows: number, size: number, seed: number, o: CriticUpdateInputOptions = {}): CriticUpdateInput {
  const rng = createRng(seed);
  const maskP = o.maskP ?? 0.8;
  const key = (i: number) => (o.keys === 'one' ? 7 % size : o.keys === 'spread' ? i % size : rng.int(size));
  return {
    critic: Float32Array.from({ length: size }, () => rng.normal() * 0.5),
    keys: Uint32Array.from({ length: rows }, (_, i) => key(i)),
    mask: Float32Array.from({ length: rows }, () => (rng.next() < maskP ? 1 : 0)),
    // A drift with the row index, so a dropped or doubled chunk moves the means.
    ret: Float32Array.from({ length: rows }, (_, i) => (o.ret === 'int' ? rng.int(7) - 2 : rng.normal() + (2 * i) / Math.max(rows, 1))),
    lr: o.lr ?? 0.3,
  };
}

/**
 * How far the f32 update may be from the float64 reference. An entry's sum adds its rows of one
 * chunk in order, then the chunks in order: each term goes through at most d additions, d = (the
 * most rows one entry has in one chunk) + chunks, so the sum is off by at most d u sum|ret| (u =
 * 2^-24) and the mean by d u max|ret|. The division (WGSL allows 2.5 ulp), lr in f32, the
 * difference, the product and the final add each add a few u of max|ret| + max|V|: atol =
 * (d + 8) u (max|ret| + max|V|). rtol 2u covers the rounding of the final value on both sides.
 */
export function criticUpdateTolerance(x: CriticUpdateInput): Tolerance {
  const size = x.critic.length;
  const R = x.keys.length;
  const { rowsPerChunk, chunks } = criticChunks(R, size);
  let most = 0;
  let maxRet = 0;
  for (let c = 0; c < chunks; c++) {
    const count = new Map<number, number>();
    for (let r = c * rowsPerChunk; r < Math.min(R, (c + 1) * rowsPerChunk); r++) {
      if (!x.mask[r] || x.keys[r]! >= size) continue;
      const n = (count.get(x.keys[r]!) ?? 0) + 1;
      count.set(x.keys[r]!, n);
      most = Math.max(most, n);
      maxRet = Math.max(maxRet, Math.abs(x.ret[r]!));
    }
  }
  const maxV = x.critic.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  const d = most + chunks;
  const u = 2 ** -24;
  return {
    atol: (d + 8) * u * (maxRet + maxV),
    rtol: 2 * u,
    why: `f32 sums, each term through at most ${d} additions (${most} rows of one entry in a chunk, ${chunks} chunks), against float64`,
  };
}

/** The update on the GPU, in `s`; the scratch starts as `scratchFill` (default NaN bits: pass 1 must clear it). */
export async function criticUpdateGpu(device: GPUDevice, s: Scratch, x: CriticUpdateInput, scratchFill = 0x7fc00000): Promise<Float32Array> {
  const config = { tableSize: x.critic.length, numRows: x.keys.length, lr: x.lr };
  const u = s.kernel(criticUpdateKernel.create(device));
  const critic = s.upload(x.critic);
  const partials = s.upload(new Uint32Array(Math.max(1, criticUpdateKernel.scratchWords(config))).fill(scratchFill), 'critic partials');
  dispatch(device, [[u, u.bind({ stateKey: s.upload(x.keys), mask: s.upload(x.mask), ret: s.upload(x.ret), partials, critic }, config)]]);
  return s.readF32(critic, x.critic.length);
}

/** The GPU's table against the reference, and the bits of the entries no row visits against the table before. */
export function criticUpdateChecks(x: CriticUpdateInput, actual: Float32Array): Check[] {
  const expected = Float32Array.from(x.critic);
  criticUpdateCpu(expected, x.keys, x.mask, x.ret, x.lr);
  const visited = new Uint8Array(x.critic.length);
  x.keys.forEach((k, r) => {
    if (x.mask[r] && k < visited.length) visited[k] = 1;
  });
  const bits = (a: Float32Array) => new Uint32Array(a.buffer, a.byteOffset, a.length).filter((_, k) => !visited[k]);
  return [
    { output: 'critic after the update', actual, expected, tol: criticUpdateTolerance(x) },
    { output: 'unvisited entries (bits)', actual: bits(actual), expected: bits(x.critic), tol: exact('a step only where count > 0') },
  ];
}

function criticUpdateCase(name: string, rows: number, size: number, o: CriticUpdateInputOptions = {}): SelfTestCase {
  return {
    // Listed under pass 1's pipeline; pass 2 (criticApply) is compiled and checked with it.
    kernel: criticPartialKernel,
    uses: [criticApplyKernel],
    name,
    run: (device) =>
      withScratch(device, async (s) => {
        const x = criticUpdateInput(rows, size, rows + size, o);
        return criticUpdateChecks(x, await criticUpdateGpu(device, s, x));
      }),
  };
}

function gaeCase(N: number, tp: number, gamma: number, lambda: number, kernel: typeof gaeKernel = gaeKernel): SelfTestCase {
  return {
    kernel,
    uses: criticUpdateKernel.kernels,
    name: `N ${N}, ${tp} rows, gamma ${gamma}, lambda ${lambda}; then the critic's update`,
    run: (device) =>
      withScratch(device, async (s) => {
        const size = 64;
        const x = criticUpdateInput(N * tp, size, N + tp);
        const reward = Float32Array.from({ length: N }, (_, n) => n % 2);
        const ref = gaeCpu(x.critic, x.keys, x.mask, reward, tp, { gamma, lambda });
        const g = s.kernel(kernel.create(device));
        const criticBuf = s.upload(x.critic);
        const adv = s.empty(N * tp);
        const ret = s.empty(N * tp);
        const stateKey = s.upload(x.keys);
        const mask = s.upload(x.mask);
        const trajIn = s.upload(packTrajIn({ reward, groupStart: new Uint32Array(N), groupSize: new Uint32Array(N).fill(1), turns: new Uint32Array(N).fill(1) }));
        const config = { tableSize: size, numRows: N * tp, lr: x.lr };
        const u = s.kernel(criticUpdateKernel.create(device));
        dispatch(device, [
          [g, g.bind({ critic: criticBuf, stateKey, mask, trajIn, adv, ret }, { numTraj: N, tp, gamma, lambda })],
          [u, u.bind({ stateKey, mask, ret, partials: s.empty(criticUpdateKernel.scratchWords(config)), critic: criticBuf }, config)],
        ]);
        const tol = { atol: 1e-6, rtol: 1e-5, why: 'f32 recursion rounded the same way step by step; fused multiply-adds differ' };
        const [updated] = criticUpdateChecks({ ...x, ret: ref.ret }, await s.readF32(criticBuf, size));
        return [
          { output: 'advantages', actual: await s.readF32(adv, N * tp), expected: ref.adv, tol },
          { output: 'returns', actual: await s.readF32(ret, N * tp), expected: ref.ret, tol },
          updated!,
        ];
      }),
  };
}

export const criticCases: SelfTestCase[] = [
  gaeCase(67, 9, 1, 1),
  gaeCase(130, 6, 0.95, 0.9),
  // critic.wgsl gae walks four rows a step: trajectories of one row, of exactly one step, and of three
  // steps and a row.
  gaeCase(50, 1, 0.99, 0.95),
  gaeCase(70, 4, 0.99, 0.95),
  gaeCase(40, 13, 1, 0.9),
  criticUpdateCase('257 rows (2 chunks), 4096 entries', 257, 4096),
  criticUpdateCase('5,000 rows on one entry', 5000, 4096, { keys: 'one' }),
  criticUpdateCase('70,000 rows (256 chunks of 274) over all 4096 entries', 70_000, 4096, { keys: 'spread' }),
];
