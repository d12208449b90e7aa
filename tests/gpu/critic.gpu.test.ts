/**
 * gae.wgsl and criticUpdate.wgsl (PPO's critic, kernels/critic.ts) vs their references, through the
 * self-test cases (kernels/selftest/critic.ts states the tolerances and why), plus the extremes:
 * an all-masked trajectory gives 0 advantages and returns, a trajectory of one row gets
 * A = R - V, and entries no row visits keep their value.
 */
import { describe, expect, it } from 'vitest';
import { packTrajIn } from '../../kernels/advantage';
import { criticUpdateKernel, gaeKernel } from '../../kernels/critic';
import { criticCases } from '../../kernels/selftest/critic';
import { GpuScratch, runCalls, withValidation } from '../helpers/gpuBuffers';
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
      const g = new GpuScratch(device);
      const gae = gaeKernel.create(device);
      const upd = criticUpdateKernel.create(device);
      const critic = g.upload(Float32Array.of(0.25, 7, -3));
      const stateKey = g.upload(Uint32Array.of(0, 0, 1, 1));
      const mask = g.upload(Float32Array.of(0, 0, 0, 1));
      const trajIn = g.upload(packTrajIn({ reward: Float32Array.of(1, 1), groupStart: Uint32Array.of(0, 1), groupSize: Uint32Array.of(1, 1), turns: Uint32Array.of(0, 1) }));
      const adv = g.empty(4);
      const ret = g.empty(4);
      runCalls(device, [
        [gae, gae.bind({ critic, stateKey, mask, trajIn, adv, ret }, { numTraj: 2, tp: 2, gamma: 1, lambda: 1 })],
        [upd, upd.bind({ stateKey, mask, ret, critic }, { tableSize: 3, numRows: 4, lr: 1 })],
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
