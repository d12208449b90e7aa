/**
 * critic.wgsl gae and the critic's update (critic.wgsl criticUpdate per row chunk, then critic.wgsl criticApply; PPO's
 * critic, kernels/advantage/critic.ts) vs their references, through the self-test cases
 * (kernels/selftest/critic.ts states the tolerances and why), plus the extremes: an all-masked
 * trajectory gives 0 advantages and returns, a trajectory of one row gets A = R - V, and entries no
 * row visits keep their value. The update's own suite: no rows, one row, rows around the chunk
 * edges (256 rows, and 256 chunks from 65,536 rows on), 200k rows random, on one entry and over
 * every entry, everything masked; two runs give the same bits. Its tolerance (criticUpdateTolerance):
 * the GPU sums in f32, an entry's rows of one chunk in order and then the chunks in order, so a
 * term passes through at most d = (most rows of one entry in one chunk) + chunks additions against
 * the float64 reference: atol (d + 8) 2^-24 (max|ret| + max|V|), the 8 for the division, lr in f32
 * and the step; rtol 2^-23 for the rounding of the result on each side.
 */
import { describe, expect, it } from 'vitest';
import { packTrajIn } from '../../kernels/advantage/advantage';
import { CRITIC_CHUNK_ROWS, criticChunks, criticUpdateKernel, criticUpdateScratchWords, gaeKernel } from '../../kernels/advantage/critic';
import { REDUCE_MAX_CHUNKS } from '../../kernels/reduce';
import { criticCases, criticUpdateChecks, criticUpdateGpu, criticUpdateInput, type CriticUpdateInputOptions } from '../../kernels/selftest/critic';
import { dispatch, measure, Scratch } from '../../kernels/selftest/harness';
import { withValidation } from '../helpers/validation';
import { requireGpu } from '../helpers/requireGpu';

describe('critic kernels match their references', () => {
  for (const c of criticCases) {
    it(c.name, async () => {
      const device = await requireGpu();
      const checks = await c.run(device);
      for (const k of checks) {
        const a = Array.from(k.actual);
        const e = Array.from(k.expected);
        a.forEach((x, i) => expect(Math.abs(x - e[i]!), `${k.output} [${i}]`).toBeLessThanOrEqual(k.tol.atol + k.tol.rtol * Math.abs(e[i]!)));
      }
    });
  }
  it('empty and one-row trajectories; unvisited entries stay', async () => {
    const device = await requireGpu();
    const got = await withValidation(device, async () => {
      const g = new Scratch(device);
      const gae = gaeKernel.create(device);
      const upd = criticUpdateKernel.create(device);
      const config = { tableSize: 3, numRows: 4, lr: 1 };
      const partials = g.empty(criticUpdateKernel.scratchWords(config));
      const critic = g.upload(Float32Array.of(0.25, 7, -3));
      const stateKey = g.upload(Uint32Array.of(0, 0, 1, 1));
      const mask = g.upload(Float32Array.of(0, 0, 0, 1));
      const trajIn = g.upload(packTrajIn({ reward: Float32Array.of(1, 1), groupStart: Uint32Array.of(0, 1), groupSize: Uint32Array.of(1, 1), turns: Uint32Array.of(0, 1) }));
      const adv = g.empty(4);
      const ret = g.empty(4);
      dispatch(device, [
        [gae, gae.bind({ critic, stateKey, mask, trajIn, adv, ret }, { numTraj: 2, tp: 2, gamma: 1, lambda: 1 })],
        [upd, upd.bind({ stateKey, mask, ret, partials, critic }, config)],
      ]);
      const out = { adv: await g.readF32(adv, 4), ret: await g.readF32(ret, 4), critic: await g.readF32(critic, 3) };
      g.destroy();
      gae.destroy();
      upd.destroy();
      return out;
    });
    expect(Array.from(got.adv)).toEqual([0, 0, 0, 1 - 7]);
    expect(Array.from(got.ret)).toEqual([0, 0, 0, 1]);
    expect(Array.from(got.critic)).toEqual([0.25, 1, -3]);
  });
});

describe('the critic update in row chunks', () => {
  const C = 4096;
  it('cuts rows by a function of the row count and table size, with a bounded scratch', () => {
    expect(criticChunks(0, C)).toEqual({ rowsPerChunk: CRITIC_CHUNK_ROWS, chunks: 0 });
    expect(criticChunks(256, C)).toEqual({ rowsPerChunk: 256, chunks: 1 });
    expect(criticChunks(257, C)).toEqual({ rowsPerChunk: 256, chunks: 2 });
    expect(criticChunks(65_536, C)).toEqual({ rowsPerChunk: 256, chunks: 256 });
    expect(criticChunks(65_537, C)).toEqual({ rowsPerChunk: 257, chunks: 256 });
    expect(criticChunks(600_000, C)).toEqual({ rowsPerChunk: 2344, chunks: 256 });
    for (const R of [0, 1, 1000, 65_536, 600_000, 2 ** 24]) {
      expect(criticUpdateScratchWords({ tableSize: C, numRows: R })).toBeLessThanOrEqual(2 * C * REDUCE_MAX_CHUNKS);
    }
  });

  // [name, rows, options]: sizes at the chunk edges, the cap of 256 chunks, and past it.
  const cases: Array<[string, number, CriticUpdateInputOptions?]> = [
    ['no rows', 0],
    ['one row', 1, { maskP: 1 }],
    ['255 rows', 255],
    ['256 rows (one full chunk)', 256],
    ['257 rows', 257],
    ['513 rows', 513],
    ['65,535 rows', 65_535],
    ['65,536 rows (256 chunks of 256)', 65_536],
    ['65,537 rows (chunks of 257)', 65_537],
    ['200,000 rows, random entries', 200_000],
    ['200,000 rows, integer returns (exact sums)', 200_000, { ret: 'int' }],
    ['200,000 rows all masked out', 200_000, { maskP: 0 }],
    ['200,000 rows on one entry', 200_000, { keys: 'one' }],
    ['200,000 rows on one entry, integer returns', 200_000, { keys: 'one', ret: 'int' }],
    ['12,293 rows over all 4096 entries', 3 * C + 5, { keys: 'spread', maskP: 1 }],
  ];
  for (const [name, rows, o] of cases) {
    it(`${name}: matches criticUpdateCpu, leaves unvisited entries' bits, same bits twice`, async () => {
      const device = await requireGpu();
      const x = criticUpdateInput(rows, C, 1000 + rows, o);
      const [a, b] = await withValidation(device, async () => {
        const s = new Scratch(device);
        try {
          // Different stale scratch each run: pass 1 must clear its tables.
          return [await criticUpdateGpu(device, s, x), await criticUpdateGpu(device, s, x, 0x3f800000)];
        } finally {
          s.destroy();
        }
      });
      expect(new Uint32Array(b!.buffer), 'second run, same bits').toEqual(new Uint32Array(a!.buffer));
      for (const check of criticUpdateChecks(x, a!)) {
        const e = measure(check.actual, check.expected, check.tol);
        console.info(`[critic] ${name} ${check.output}: max abs ${e.maxAbs.toExponential(2)}, ${(100 * e.worst).toFixed(1)}% of atol ${check.tol.atol.toExponential(2)} + rtol ${check.tol.rtol.toExponential(2)}`);
        expect(e.bad, `${check.output}: first miss at [${e.firstBad}]`).toBe(0);
      }
      if (o?.maskP === 0 || rows === 0) expect(new Uint32Array(a!.buffer)).toEqual(new Uint32Array(x.critic.buffer));
      if (o?.keys === 'spread') expect(a!.every((v, k) => v !== x.critic[k])).toBe(true);
    });
  }

  it('refuses a scratch buffer smaller than criticUpdateScratchWords', async () => {
    const device = await requireGpu();
    const g = new Scratch(device);
    const upd = criticUpdateKernel.create(device);
    const config = { tableSize: C, numRows: 1000, lr: 0.1 };
    const bufs = { stateKey: g.empty(1000), mask: g.empty(1000), ret: g.empty(1000), critic: g.empty(C) };
    expect(() => upd.bind({ ...bufs, partials: g.empty(criticUpdateScratchWords(config) - 4) }, config)).toThrow(/scratchWords/);
    upd.destroy();
    g.destroy();
  });
});
