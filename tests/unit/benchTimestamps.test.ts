/**
 * What the kernel table says about its own timing: Dawn's timestamp quantization (65,536 ns) is
 * turned off for `bench:dawn` and reported when a run had it anyway, and each row says how much
 * of its time its dependent dispatches' floor explains.
 */
import { describe, expect, it } from 'vitest';
import { dawnCreateFlags } from '../../bench/args';
import { dispatchesPerCall } from '../../bench/page/kernels';
import { floorShare, kernelTable, marginalOfCopy } from '../../bench/lib/tables';
import { looksQuantized } from '../../bench/lib/timestampGrid';
import type { KernelRow } from '../../bench/lib/types';

const summary = (median: number) => ({ n: 10, median, min: median, max: median, mean: median });

function row(over: Partial<KernelRow> = {}): KernelRow {
  return {
    kernel: 'whiten', sizeIndex: 2, size: 'R=589824 rows', bytes: 7077888, flops: 7077888, dispatchesPerPass: 64,
    reps: { gpu: 10, cpu: 10, copy: 10 }, cpuRunsPerRep: 1,
    gpuTimestampMs: summary(0.0126), gpuWallMs: summary(0.0163), copyTimestampMs: summary(0.00287), copyWallMs: summary(0.0044),
    copyDispatchesPerPass: 64, cpuMs: summary(12.1), gbps: 562, gflops: 562, copyGbps: 2466, cpuGbps: 0.58, gpuOverCpu: 0.001,
    ...over,
  };
}

describe('Dawn flags for bench:dawn', () => {
  it('turns timestamp quantization off unless asked for', () => {
    expect(dawnCreateFlags([])).toEqual(['disable-dawn-features=timestamp_quantization']);
    expect(dawnCreateFlags(['backend=vulkan'])).toEqual(['backend=vulkan', 'disable-dawn-features=timestamp_quantization']);
    expect(dawnCreateFlags(['enable-dawn-features=allow_unsafe_apis,timestamp_quantization'])).toEqual(['enable-dawn-features=allow_unsafe_apis,timestamp_quantization']);
  });

  it('merges every disable list into one (Dawn keeps one value a key)', () => {
    expect(dawnCreateFlags(['disable-dawn-features=use_vulkan_zero_initialize_workgroup_memory_extension'])).toEqual([
      'disable-dawn-features=use_vulkan_zero_initialize_workgroup_memory_extension,timestamp_quantization',
    ]);
    expect(dawnCreateFlags(['disable-dawn-features=a, b', 'backend=vulkan', 'disable-dawn-features=b,timestamp_quantization'])).toEqual([
      'backend=vulkan',
      'disable-dawn-features=a,b,timestamp_quantization',
    ]);
  });
});

describe('timestamp grid', () => {
  it('calls a run quantized only when every one of enough passes sat on the grid', () => {
    expect(looksQuantized({ passes: 40, onGrid: 40 })).toBe(true);
    expect(looksQuantized({ passes: 40, onGrid: 39 })).toBe(false);
    expect(looksQuantized({ passes: 3, onGrid: 3 })).toBe(false);
    expect(looksQuantized({ passes: 0, onGrid: 0 })).toBe(false);
  });

  it('warns in the kernel table when the run was quantized, and not otherwise', () => {
    const warned = kernelTable({ rows: [row()], unknownBindings: [], timestampGrid: { passes: 60, onGrid: 60 } }, true);
    expect(warned).toContain('**Timestamps were quantized**: all 60 passes');
    for (const grid of [{ passes: 60, onGrid: 1 }, undefined]) {
      expect(kernelTable({ rows: [row()], unknownBindings: [], ...(grid ? { timestampGrid: grid } : {}) }, true)).not.toContain('quantized**');
    }
  });
});

describe('the floor of a dependent dispatch', () => {
  it('is the dispatches of a call times the floor, as a share of the time', () => {
    expect(floorShare(row({ dispatchesPerCall: 3, floorMs: summary(0.0019) }), true)).toBe('3 × 1.90 µs = 45%');
    // Wall times when the table has no timestamps.
    expect(floorShare(row({ dispatchesPerCall: 3, floorMs: summary(0.0019) }), false)).toBe('3 × 1.90 µs = 35%');
  });

  it('is left empty for results from before it was measured, or without a time', () => {
    expect(floorShare(row(), true)).toBe('');
    expect(floorShare(row({ dispatchesPerCall: 2 }), true)).toBe('');
    expect(floorShare(row({ dispatchesPerCall: 2, floorMs: { n: 0, median: NaN, min: NaN, max: NaN, mean: NaN } }), true)).toBe('');
    expect(floorShare(row({ dispatchesPerCall: 2, floorMs: summary(0.002), gpuTimestampMs: null, gpuWallMs: summary(NaN) }), true)).toBe('');
  });

  it('is a column of the kernel table', () => {
    const t = kernelTable({ rows: [row({ dispatchesPerCall: 2, floorMs: summary(0.0021) })], unknownBindings: [] }, true);
    expect(t).toContain('| dispatches per call × floor, of the time |');
    expect(t).toContain('| 2 × 2.10 µs = 33% |');
  });

  it('counts the dispatches one call records, without a GPU', () => {
    const stages = {
      encode(pass: GPUComputePassEncoder) {
        for (let i = 0; i < 3; i++) {
          pass.setPipeline({} as GPUComputePipeline);
          pass.setBindGroup(0, {} as GPUBindGroup);
          pass.dispatchWorkgroups(4, 1);
        }
      },
    };
    expect(dispatchesPerCall(stages, {})).toBe(3);
    expect(dispatchesPerCall({ encode: () => {} }, {})).toBe(0);
  });
});

describe("recording's CPU cost", () => {
  it('is a note under the kernel table when it was measured, and absent from older results', () => {
    const encoding = { dispatches: 256, dispatchUs: { n: 5, median: 3.25, min: 2.9, max: 4, mean: 3.3 }, submitUs: { n: 5, median: 41, min: 35, max: 60, mean: 44 } };
    const t = kernelTable({ rows: [row()], unknownBindings: [], encoding }, true);
    expect(t).toContain('one dispatch (setPipeline, setBindGroup, dispatchWorkgroups, as every kernel\'s encode records it) took 3.25 µs of the recording thread (median of 5 passes of 256; min 2.90)');
    expect(t).toContain('finishing and submitting the pass 41.0 µs. An iteration');
    const withReadback = kernelTable({ rows: [row()], unknownBindings: [], encoding: { ...encoding, readbackUs: { n: 5, median: 310, min: 250, max: 400, mean: 320 } } }, true);
    expect(withReadback).toContain("a 4 KiB readback's round trip (one dispatch and a copy submitted, then mapAsync until the bytes are here, as each rollout turn makes one) took 310 µs (min 250)");
    expect(kernelTable({ rows: [row()], unknownBindings: [] }, true)).not.toContain('Recording costs the CPU');
  });
});

describe('the marginal of a copy', () => {
  const at = (sizeIndex: number, bytes: number, t: number, copy: number, over: Partial<KernelRow> = {}) =>
    row({ sizeIndex, bytes, gpuTimestampMs: summary(t), gpuWallMs: summary(2 * t), copyTimestampMs: summary(copy), copyWallMs: summary(copy), ...over });

  it('is the copy\'s extra time over the kernel\'s, between two sizes, so fixed costs cancel', () => {
    // 10 µs fixed + 1 µs/MB against a copy at 2 µs + 0.5 µs/MB: 50% marginal, though 22% of a copy at 8 MB.
    const small = at(1, 1e6, 0.011, 0.0025);
    const big = at(2, 8e6, 0.018, 0.006);
    expect(marginalOfCopy(big, small, true)).toBe('50%');
    // Wall times when the table has none: the kernel's doubled, the copy's the same.
    expect(marginalOfCopy(big, small, false)).toBe('25%');
  });

  it('says "—" when a time did not grow, and nothing without a size before', () => {
    expect(marginalOfCopy(at(2, 8e6, 0.010, 0.006), at(1, 1e6, 0.011, 0.0025), true)).toBe('—');
    expect(marginalOfCopy(at(2, 8e6, 0.018, 0.002), at(1, 1e6, 0.011, 0.0025), true)).toBe('—');
    expect(marginalOfCopy(at(0, 1e5, 0.01, 0.002), undefined, true)).toBe('');
    expect(marginalOfCopy(at(2, 8e6, 0.018, 0.006), at(1, 1e6, 0.011, 0.0025, { skipped: 'too large' }), true)).toBe('');
  });

  it('is a column of the kernel table, taken within each kernel only', () => {
    const rows = [at(1, 1e6, 0.011, 0.0025), at(2, 8e6, 0.018, 0.006), at(1, 1e6, 0.001, 0.0025, { kernel: 'adam' })];
    const t = kernelTable({ rows, unknownBindings: [] }, true);
    expect(t).toContain('| marginal of copy (from the size before) |');
    const lines = t.split('\n').filter((l) => l.startsWith('| whiten') || l.startsWith('| adam'));
    expect(lines.map((l) => l.split(' | ')[10])).toEqual(['', '', '50%']);
  });
});
