/**
 * adam.wgsl essScale vs essScaleCpu (kernels/optimizer/essScale.ts). Tolerance rtol 2e-5: the ESS is a ratio of
 * f32 tree sums of exp over up to ~4,000 trajectories (a few ulps each; from 1,024 on, the kernel's
 * threads load four trajectories a step) and one exp/log pair; the
 * sqrt halves the relative error. Extremes: log-weights of +-1000 (a product of ratios would be
 * e^1000), one dominant trajectory (ESS -> 1/N), equal weights (ESS = N), no live trajectory.
 */
import { describe, expect, it } from 'vitest';
import { essScaleCpu, essScaleKernel, type EssScaleOptions } from '../../kernels/optimizer/essScale';
import { packTrajStats, type TrajStats } from '../../kernels/stats/trajStats';
import { createRng } from '../../workers/core/rng';
import { expectClose } from '../helpers/expectClose';
import { dispatch, Scratch } from '../../kernels/selftest/harness';
import { withValidation } from '../helpers/validation';
import { requireGpu } from '../helpers/requireGpu';

function statsOf(logIS: number[], len?: number[]): TrajStats {
  const N = logIS.length;
  return {
    len: Float32Array.from(len ?? logIS.map(() => 3)),
    entMean: new Float32Array(N),
    logIS: Float32Array.from(logIS),
    g2: new Float32Array(N),
  };
}

async function check(stats: TrajStats, o: EssScaleOptions, name: string): Promise<[number, number]> {
  const device = await requireGpu();
  const ref = essScaleCpu(stats, o);
  const got = await withValidation(device, async () => {
    const g = new Scratch(device);
    const k = essScaleKernel.create(device);
    const out = g.empty(2);
    dispatch(device, [[k, k.bind({ stats: g.upload(packTrajStats(stats)), out }, { ...o, numTraj: stats.len.length })]]);
    const r = await g.readF32(out, 2);
    g.destroy();
    k.destroy();
    return r;
  });
  expectClose(Array.from(got), ref, { atol: 1e-7, rtol: 2e-5, label: `essScale ${name}` });
  return [got[0]!, got[1]!];
}

const SQRT: EssScaleOptions = { enabled: true, rule: 'sqrt', rhoBase: 1 };

describe('adam.wgsl essScale matches essScaleCpu', () => {
  for (const N of [1, 7, 256, 257, 1000, 1025, 4099]) {
    it(`N = ${N}, random stale log-weights`, async () => {
      const rng = createRng(N);
      await check(statsOf(Array.from({ length: N }, () => rng.normal() * 2)), SQRT, `N=${N}`);
      await check(statsOf(Array.from({ length: N }, () => rng.normal())), { enabled: true, rule: 'linear', rhoBase: 0.5 }, `N=${N} linear`);
    });
  }
  it('equal weights: ESS = N, factor 1; one dominant weight: ESS -> 1/N', async () => {
    expect((await check(statsOf([0.3, 0.3, 0.3, 0.3]), SQRT, 'equal'))[1]).toBeCloseTo(1, 6);
    const [rho, f] = await check(statsOf([1000, -1000, -1000, -1000]), SQRT, 'dominant +-1000');
    expect(rho).toBeCloseTo(0.25, 6);
    expect(f).toBeCloseTo(0.5, 6);
  });
  it('padding rows (len 0) are not counted; no live row gives ESS 1; disabled gives factor 1', async () => {
    await check(statsOf([0, 5, 0, -2], [2, 0, 1, 0]), SQRT, 'padding');
    expect(await check(statsOf([1, 2], [0, 0]), SQRT, 'none live')).toEqual([1, 1]);
    const [, f] = await check(statsOf([4, 0, 0]), { enabled: false, rule: 'sqrt', rhoBase: 1 }, 'disabled');
    expect(f).toBe(1);
  });
});

describe('essScale.wgsl over a range of trajectories (a minibatch)', () => {
  it('trajBase and numTraj select the range; the output lands at its binding offset', async () => {
    const device = await requireGpu();
    const rng = createRng(31);
    const all = statsOf(Array.from({ length: 300 }, () => rng.normal() * 2));
    const ranges: Array<[number, number]> = [[0, 150], [150, 300], [7, 263]];
    const sub = (n0: number, n1: number): TrajStats => ({
      len: all.len.subarray(n0, n1), entMean: all.entMean.subarray(n0, n1), logIS: all.logIS.subarray(n0, n1), g2: all.g2.subarray(n0, n1),
    });
    const got = await withValidation(device, async () => {
      const g = new Scratch(device);
      const k = essScaleKernel.create(device);
      // 64 words (256 bytes) per range: the storage-binding offset alignment.
      const out = g.empty(64 * ranges.length);
      const stats = g.upload(packTrajStats(all));
      dispatch(device, ranges.map(([n0, n1], i) => [k, k.bind({ stats, out: { buffer: out, offset: 256 * i, size: 8 } }, { ...SQRT, numTraj: n1 - n0, trajBase: n0 })] as const));
      const r = await g.readF32(out, 64 * ranges.length);
      g.destroy();
      k.destroy();
      return r;
    });
    ranges.forEach(([n0, n1], i) => {
      expectClose([got[64 * i]!, got[64 * i + 1]!], essScaleCpu(sub(n0, n1), SQRT), { atol: 1e-7, rtol: 2e-5, label: `range ${n0}..${n1}` });
    });
    // Different ranges, different ESS: the range really moved.
    expect(got[0]).not.toBe(got[64]);
  });
});
