/**
 * advantage.wgsl vs grpoAdvantageCpu (kernels/advantage.ts). Tolerance atol 1e-6, rtol 1e-5: the
 * group mean and std are f32 sums of at most 64 rewards of order 1 (a few ulps), divided by
 * std + eps. Zeros must be exact where the reference has them (masked rows, all-equal groups),
 * since adv_zero_frac counts them.
 */
import { describe, expect, it } from 'vitest';
import { ADVANTAGE_WORKGROUP_SIZE, advantageKernel, grpoAdvantageCpu, type GrpoOptions } from '../../kernels/advantage';
import { createRng } from '../../workers/rng';
import { expectClose } from '../helpers/expectClose';
import { GpuScratch, runCalls, withValidation } from '../helpers/gpuBuffers';
import { requireGpu } from '../helpers/requireGpu';

type RewardKind = 'normal' | 'binary' | 'equal';

async function check(N: number, G: number, tp: number, kind: RewardKind, o: Partial<GrpoOptions> = {}) {
  const device = await requireGpu();
  const rng = createRng(N * 1000 + G * 10 + tp);
  const rewards = Float32Array.from({ length: N }, (_, n) =>
    kind === 'binary' ? rng.int(2) : kind === 'equal' ? 0.1 * (1 + Math.floor(n / G)) : rng.normal(),
  );
  const mask = Float32Array.from({ length: N * tp }, () => (rng.next() < 0.8 ? 1 : 0));
  const opts: GrpoOptions = { group: G, scaleStd: true, unbiasedStd: false, eps: 1e-6, ...o };
  const ref = grpoAdvantageCpu(rewards, mask, tp, opts);
  const adv = await withValidation(device, async () => {
    const g = new GpuScratch(device);
    const kernel = advantageKernel.create(device);
    const out = g.empty(N * tp);
    const call = kernel.bind({ rewards: g.upload(rewards), mask: g.upload(mask), adv: out }, { ...opts, numTraj: N, tp });
    runCalls(device, [[kernel, call]]);
    const res = await g.readF32(out, N * tp);
    g.destroy();
    kernel.destroy();
    return res;
  });
  const name = `advantage N=${N} G=${G} tp=${tp} ${kind}${o.scaleStd === false ? ' no-std' : ''}${o.unbiasedStd ? ' unbiased' : ''}`;
  expectClose(adv, ref, { atol: 1e-6, rtol: 1e-5, label: name });
  for (let i = 0; i < ref.length; i++) if (ref[i] === 0) expect(adv[i] === 0, `${name}: adv[${i}] is exactly 0`).toBe(true);
}

describe('advantage.wgsl matches grpoAdvantageCpu', () => {
  // Rows N * tp at the edge sizes 1, 63, 64, 65, 123 and 1152.
  const wg = ADVANTAGE_WORKGROUP_SIZE;
  const cases: Array<[number, number, number]> = [
    [1, 1, 1],
    [7, 7, (wg - 1) / 7],
    [8, 4, wg / 8],
    [13, 13, (wg + 1) / 13],
    [41, 41, 3],
    [128, 8, 9],
  ];
  for (const [N, G, tp] of cases) {
    it(`rows = ${N * tp} (N ${N}, group ${G}, tp ${tp})`, async () => {
      await check(N, G, tp, 'normal');
      await check(N, G, tp, 'binary');
    });
  }
  it('group size 1 uses mean 0 and std 1', async () => check(20, 1, 3, 'normal'));
  it('all-equal groups give exactly 0 (values 0.1, 0.2, ... that f32 sums do not keep exact)', async () => {
    await check(24, 3, 4, 'equal');
    await check(60, 6, 2, 'equal', { unbiasedStd: true });
  });
  it('without std scaling, and with the unbiased std', async () => {
    await check(32, 8, 5, 'normal', { scaleStd: false });
    await check(32, 8, 5, 'binary', { unbiasedStd: true });
  });
});
