/**
 * Self-test of finiteCheck.wgsl against nonFiniteCpu (from tests/gpu/finiteCheck.gpu.test.ts). The
 * result is a flag, so it must match exactly: finite extremes (the largest f32, the smallest
 * subnormal, -0) leave it clear; a NaN, +Inf or -Inf sets the bit, ORed into bits already set;
 * on row-structured data only the checked column counts (an i32 -1 elsewhere is not a NaN).
 */
import { createRng } from '../../workers/rng';
import { FINITE_CHECK_WORKGROUP_SIZE, finiteCheckKernel, nonFiniteCpu, type FiniteCheckConfig } from '../finiteCheck';
import { dispatch, exact, withScratch, type SelfTestCase } from './harness';

const EXACT = exact('a flag: set exactly when a checked value is NaN or ±Inf');

/** Runs the kernel once per config on `data`, health starting at `start`; expected from nonFiniteCpu. */
function finiteCase(name: string, data: () => Float32Array, configs: Array<Omit<FiniteCheckConfig, 'n'> & { start?: number }>): SelfTestCase {
  return {
    kernel: finiteCheckKernel,
    name,
    run: (device) =>
      withScratch(device, async (s) => {
        const d = data();
        const k = s.kernel(finiteCheckKernel.create(device));
        const buf = s.upload(d);
        const actual: number[] = [];
        const expected: number[] = [];
        for (const c of configs) {
          const stride = c.stride ?? 1;
          const n = Math.floor((d.length - (c.offset ?? 0) + stride - 1) / stride);
          const health = s.upload(Uint32Array.from([c.start ?? 0]));
          dispatch(device, [[k, k.bind({ data: buf, health }, { ...c, n })]]);
          actual.push((await s.readU32(health, 1))[0]!);
          expected.push((c.start ?? 0) | (nonFiniteCpu(d, stride, c.offset ?? 0) ? c.bit : 0));
        }
        return [{ output: 'health word', actual, expected, tol: EXACT }];
      }),
  };
}

/** n finite extremes; `bad` (if given) at index `at`. */
function extremes(n: number, bad?: number, at = n - 1): () => Float32Array {
  return () => {
    const rng = createRng(n);
    const d = Float32Array.from({ length: n }, (_, i) => [3.4028234e38, -3.4028234e38, 1e-45, -0][i % 4]! * (rng.next() < 0.5 ? 1 : 0.5));
    if (bad !== undefined) d[at] = bad;
    return d;
  };
}

/** 130 rows of 4 words: f32 values in columns 0..2, an i32 -1 (bits of a NaN) in column 3. */
function rows(): Float32Array {
  const raw = new ArrayBuffer(130 * 16);
  const f = new Float32Array(raw);
  const i32 = new Int32Array(raw);
  for (let r = 0; r < 130; r++) {
    f[r * 4] = r * 0.5;
    f[r * 4 + 1] = 1;
    i32[r * 4 + 3] = -1;
  }
  return f;
}

const N = FINITE_CHECK_WORKGROUP_SIZE + 1;

export const finiteCheckCases: SelfTestCase[] = [
  finiteCase(`n ${N}, finite extremes only`, extremes(N), [{ bit: 4 }]),
  finiteCase(`n ${N}, a NaN at the end`, extremes(N, NaN), [{ bit: 4 }]),
  finiteCase('n 3001, +Inf in the middle, bit ORed into bit 2', extremes(3001, Infinity, 1517), [{ bit: 1, start: 2 }]),
  finiteCase('n 1000, -Inf', extremes(1000, -Infinity, 517), [{ bit: 1 }]),
  finiteCase('one column of 4-word rows: columns 0, 1 and the i32 -1 column 3', rows, [
    { bit: 1, stride: 4, offset: 0 },
    { bit: 1, stride: 4, offset: 1 },
    { bit: 1, stride: 4, offset: 3 },
  ]),
];
