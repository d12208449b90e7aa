/**
 * The kernel benchmark (bench/page/kernels.ts) on a real adapter, at its smallest size: every row
 * says how many dispatches one call records and carries the size's floor (one dependent dispatch),
 * and the timer counts the timestamped passes it checked for Dawn's quantization. No timing is
 * asserted, only that the figures exist and are sane.
 */
import { describe, expect, it } from 'vitest';
import { runKernelBench } from '../../bench/page/kernels';

async function timingDevice(): Promise<GPUDevice> {
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) throw new Error('no WebGPU adapter (see tests/helpers/requireGpu.ts)');
  return adapter.requestDevice({ requiredFeatures: adapter.features.has('timestamp-query') ? ['timestamp-query'] : [] });
}

describe('kernel benchmark: dispatches per call, the floor, the timestamp grid', () => {
  it('times whiten (three dispatches a call), finiteCheck (one) and the floor at the smallest size', async () => {
    const device = await timingDevice();
    try {
      const { rows, timestampGrid } = await runKernelBench(device, {
        batches: [1], paramHidden: [64], warmup: 1, reps: 3, passMs: 1, maxDispatchesPerPass: 4, gpuWarmMs: 0, cellBudgetMs: 200,
        only: ['whiten', 'finiteCheck'], log: () => {},
      });
      expect(rows.map((r) => [r.kernel, r.dispatchesPerCall])).toEqual([['whiten', 3], ['finiteCheck', 1]]);
      for (const r of rows) {
        expect(r.floorMs!.n).toBe(3);
        expect(r.floorMs!.median).toBeGreaterThan(0);
        expect(Number.isFinite(r.floorMs!.median)).toBe(true);
      }
      if (device.features.has('timestamp-query')) {
        // Per cell: warm-up kernel and copy, 3 + 3 timed; the floor: one warm-up and 3.
        expect(timestampGrid!.passes).toBe(2 * (2 + 3 + 3) + 4);
        expect(timestampGrid!.onGrid).toBeLessThanOrEqual(timestampGrid!.passes);
      } else expect(timestampGrid).toBeUndefined();
    } finally {
      device.destroy();
    }
  });
});
