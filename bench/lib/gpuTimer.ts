/**
 * GPU timing as the benchmarks do it (BENCHMARKS.md): `n` dispatches in one compute pass with
 * timestampWrites at its start and end (GPU time = delta / n), and the wall clock around
 * submit -> onSubmittedWorkDone (also / n). Negative or zero timestamp deltas (counter resets,
 * quantization) are discarded, never reported.
 *
 * Dawn rounds timestamps down to a multiple of 65,536 ns unless its `timestamp_quantization`
 * toggle is off (Chromium: --enable-webgpu-developer-features; Dawn in Node:
 * disable-dawn-features=timestamp_quantization). The timer counts the passes whose two timestamps
 * both fall on that grid, so a run says when its figures carry that error (BENCHMARKS.md).
 */
import { BufferUsage, defineKernel, MapMode, uniformLayout } from '../../kernels/pipeline';
import copyWGSL from '../copy.wgsl?raw';
import { now } from './stats';
import { TIMESTAMP_GRID_NS, type TimestampGrid } from './timestampGrid';

const QUERY_RESOLVE = 0x200;

export interface GpuSample {
  /** Timestamp time per dispatch (ms), null without timestamp-query or on a bad delta. */
  gpuMs: number | null;
  /** Wall time per dispatch (ms): submit to onSubmittedWorkDone, over n. */
  wallMs: number;
}

export interface GpuTimer {
  readonly timestamps: boolean;
  /** What the timestamped passes so far looked like (quantization check). */
  grid(): TimestampGrid;
  time(encode: (pass: GPUComputePassEncoder) => void, n: number): Promise<GpuSample>;
  destroy(): void;
}

export function createGpuTimer(device: GPUDevice): GpuTimer {
  const timestamps = device.features.has('timestamp-query');
  const querySet = timestamps ? device.createQuerySet({ type: 'timestamp', count: 2 }) : null;
  const resolve = timestamps ? device.createBuffer({ size: 16, usage: QUERY_RESOLVE | BufferUsage.COPY_SRC }) : null;
  const read = timestamps ? device.createBuffer({ size: 16, usage: BufferUsage.MAP_READ | BufferUsage.COPY_DST }) : null;
  const grid: TimestampGrid = { passes: 0, onGrid: 0 };
  return {
    timestamps,
    grid: () => ({ ...grid }),
    async time(encode, n) {
      await device.queue.onSubmittedWorkDone();
      const enc = device.createCommandEncoder({ label: 'bench' });
      const pass = enc.beginComputePass(
        querySet ? { timestampWrites: { querySet, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 } } : {},
      );
      for (let i = 0; i < n; i++) encode(pass);
      pass.end();
      if (querySet && resolve && read) {
        enc.resolveQuerySet(querySet, 0, 2, resolve, 0);
        enc.copyBufferToBuffer(resolve, 0, read, 0, 16);
      }
      const cb = enc.finish();
      const t0 = now();
      device.queue.submit([cb]);
      await device.queue.onSubmittedWorkDone();
      const wallMs = (now() - t0) / n;
      let gpuMs: number | null = null;
      if (read) {
        await read.mapAsync(MapMode.READ);
        const t = new BigUint64Array(read.getMappedRange().slice(0));
        read.unmap();
        grid.passes++;
        if (t[0]! % TIMESTAMP_GRID_NS === 0n && t[1]! % TIMESTAMP_GRID_NS === 0n) grid.onGrid++;
        const delta = Number(t[1]! - t[0]!);
        gpuMs = delta > 0 ? delta / 1e6 / n : null;
      }
      return { gpuMs, wallMs };
    },
    destroy() {
      querySet?.destroy();
      resolve?.destroy();
      read?.destroy();
    },
  };
}

/** The ceiling: a plain vec4<f32> copy (bench/copy.wgsl), buffers src and dst of n4 vec4s each. */
export const copyKernel = defineKernel({
  label: 'copy',
  wgsl: copyWGSL,
  workgroupSize: 256,
  bindings: ['src', 'dst'],
  uniform: uniformLayout('Copy', [['n4', 'u32']] as const),
  values: (c: { n4: number }) => ({ n4: c.n4 }),
  workgroups: (c) => Math.ceil(c.n4 / 256),
});

/** Dispatches per timed pass so one pass lasts about `targetMs` (1..maxN). */
export function dispatchesFor(singleMs: number, targetMs: number, maxN: number): number {
  if (!(singleMs > 0)) return maxN;
  return Math.max(1, Math.min(maxN, Math.round(targetMs / singleMs)));
}
