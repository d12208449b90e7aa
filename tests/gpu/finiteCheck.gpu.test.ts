/** finiteCheck.wgsl vs nonFiniteCpu: exact (a flag), at edge sizes and for every non-finite kind. */
import { describe, expect, it } from 'vitest';
import { FINITE_CHECK_WORKGROUP_SIZE, finiteCheckKernel, nonFiniteCpu } from '../../kernels/finiteCheck';
import { createRng } from '../../workers/rng';
import { GpuScratch, runCalls, withValidation } from '../helpers/gpuBuffers';
import { edgeSizes } from '../helpers/mlpFixture';
import { requireGpu } from '../helpers/requireGpu';

async function gpuFlag(data: Float32Array, bit: number, start = 0): Promise<number> {
  const device = await requireGpu();
  return withValidation(device, async () => {
    const g = new GpuScratch(device);
    const k = finiteCheckKernel.create(device);
    const health = g.upload(Uint32Array.from([start]));
    runCalls(device, [[k, k.bind({ data: g.upload(data), health }, { n: data.length, bit })]]);
    const out = (await g.readU32(health, 1))[0]!;
    g.destroy();
    k.destroy();
    return out;
  });
}

describe('finiteCheck.wgsl matches nonFiniteCpu', () => {
  for (const n of edgeSizes(FINITE_CHECK_WORKGROUP_SIZE, 3001)) {
    it(`n = ${n}: finite data leaves the flag clear; one bad value at the end sets it`, async () => {
      const rng = createRng(n);
      // Extremes that are still finite: the largest f32, the smallest subnormal, -0.
      const data = Float32Array.from({ length: n }, (_, i) => [3.4028234e38, -3.4028234e38, 1e-45, -0][i % 4]! * (rng.next() < 0.5 ? 1 : 0.5));
      expect(nonFiniteCpu(data)).toBe(false);
      expect(await gpuFlag(data, 4)).toBe(0);
      data[n - 1] = NaN;
      expect(nonFiniteCpu(data)).toBe(true);
      expect(await gpuFlag(data, 4)).toBe(4);
    });
  }
  it('detects +Inf, -Inf and NaN anywhere, and ORs into bits already set', async () => {
    for (const bad of [Infinity, -Infinity, NaN]) {
      const data = new Float32Array(1000);
      data[517] = bad;
      expect(await gpuFlag(data, 1, 2)).toBe(3);
    }
    expect(await gpuFlag(new Float32Array(10), 1, 2)).toBe(2);
  });
});

describe('finiteCheck.wgsl on one column of row-structured data', () => {
  it('checks only data[i * stride + offset]: an i32 -1 (all ones) in another column is not a NaN', async () => {
    const device = await requireGpu();
    const rows = 130;
    const raw = new ArrayBuffer(rows * 4 * 4);
    const f = new Float32Array(raw);
    const i32 = new Int32Array(raw);
    for (let r = 0; r < rows; r++) {
      f[r * 4] = r * 0.5;
      f[r * 4 + 1] = 1;
      i32[r * 4 + 3] = -1; // clip column: bits 0xffffffff, a NaN pattern as f32
    }
    const flag = async (offset: number) =>
      withValidation(device, async () => {
        const g = new GpuScratch(device);
        const k = finiteCheckKernel.create(device);
        const health = g.upload(new Uint32Array(1));
        runCalls(device, [[k, k.bind({ data: g.upload(f), health }, { n: rows, bit: 1, stride: 4, offset })]]);
        const out = (await g.readU32(health, 1))[0]!;
        g.destroy();
        k.destroy();
        return out;
      });
    expect([await flag(0), await flag(1), await flag(3)]).toEqual([0, 0, 1]);
    expect([nonFiniteCpu(f, 4, 0), nonFiniteCpu(f, 4, 1), nonFiniteCpu(f, 4, 3)]).toEqual([false, false, true]);
  });
});
