/** The self-test's error measures and report (kernels/selftest), without a GPU. */
import { describe, expect, it } from 'vitest';
import { formatReport, formatTolerance, summarize, type SelfTestResult } from '../../kernels/selftest';
import { measure } from '../../kernels/selftest/harness';

describe('measure', () => {
  const tol = { atol: 1e-6, rtol: 1e-4 };

  it('relative error uses max(|expected|, atol / rtol): near-zero values do not explode it', () => {
    // |e| = 1e-9 is below the floor 1e-2: rel = 5e-7 / 1e-2, not 5e-7 / 1e-9.
    const e = measure([1e-9 + 5e-7], [1e-9], tol);
    expect(e.maxAbs).toBeCloseTo(5e-7, 12);
    expect(e.maxRel).toBeCloseTo(5e-5, 9);
    expect(e.bad).toBe(0);
    // Above the floor it is the plain relative error.
    expect(measure([10.0005], [10], tol).maxRel).toBeCloseTo(5e-5, 9);
  });

  it('passes exactly when abs <= atol + rtol |e| everywhere, and names the first miss', () => {
    const e = measure([1, 2, 3.01, 4.1], [1, 2, 3, 4], tol);
    expect(e).toMatchObject({ n: 4, bad: 2, firstBad: 2 });
    expect(e.worst).toBeGreaterThan(1);
    const ok = measure([1 + 5e-5], [1], tol);
    expect(ok.bad).toBe(0);
    expect(ok.worst).toBeCloseTo(5e-5 / (1e-6 + 1e-4), 3);
  });

  it('NaN against NaN is equal; NaN or Inf against a number is an infinite, failing error', () => {
    expect(measure([NaN, Infinity], [NaN, Infinity], tol)).toMatchObject({ bad: 0, maxAbs: 0 });
    expect(measure([NaN], [1], tol)).toMatchObject({ bad: 1, maxAbs: Infinity, maxRel: Infinity });
    expect(measure([Infinity], [1], tol)).toMatchObject({ bad: 1, maxAbs: Infinity });
  });

  it('exact checks (atol = rtol = 0) fail on any difference; rel divides by max(|e|, 1)', () => {
    expect(measure([3, 5], [3, 5], { atol: 0, rtol: 0 }).bad).toBe(0);
    const e = measure([3, 0.5], [3, 0], { atol: 0, rtol: 0 });
    expect(e).toMatchObject({ bad: 1, maxAbs: 0.5, maxRel: 0.5, worst: Infinity });
  });

  it('rejects outputs of different lengths', () => {
    expect(() => measure([1], [1, 2], tol)).toThrow(/got 1 values, expected 2/);
  });
});

describe('summary and report', () => {
  const row = (kernel: string, pass: boolean, extra: Partial<SelfTestResult> = {}): SelfTestResult => ({
    kernel,
    case: 'rows 65',
    output: 'h, z',
    tol: { atol: 2e-5, rtol: 1e-4, why: 'f32 sums' },
    errors: { n: 10, maxAbs: pass ? 1e-6 : 1, maxRel: pass ? 1e-6 : 1, worst: pass ? 0.05 : 10, bad: pass ? 0 : 3, firstBad: pass ? -1 : 4 },
    pass,
    ...extra,
  });

  it('a kernel passes when all its rows pass', () => {
    const s = summarize([row('forward', true), row('forward', false), row('sample', true)]);
    expect(s.kernels).toEqual([
      { kernel: 'forward', pass: false },
      { kernel: 'sample', pass: true },
    ]);
    expect(s.line).toBe('1/2 kernels passed (2/3 checks)');
  });

  it('the plain-text report names the adapter, the verdict and every row', () => {
    const env = { vendor: 'google', architecture: 'swiftshader', description: 'SwiftShader device', isFallbackAdapter: true, userAgent: 'UA' };
    const text = formatReport(env, [row('forward', true), row('adam', false), row('stats', false, { errors: null, error: 'WebGPU validation error: x' })], {
      when: new Date(0),
      stopped: 'The GPU device was lost. reason: unknown',
    });
    expect(text).toContain('Adapter: vendor "google", architecture "swiftshader", description "SwiftShader device", fallback (software) adapter: yes');
    expect(text).toContain('Result: 1/3 kernels passed (1/3 checks); FAILED: adam, stats\nStopped before the end: The GPU device was lost. reason: unknown');
    expect(text).toContain('Date: 1970-01-01T00:00:00.000Z');
    expect(text).toContain('PASS\tforward\trows 65\th, z\t1.00e-6\t1.00e-6\tatol 2.00e-5, rtol 1.00e-4');
    expect(text).toContain('FAIL\tadam\trows 65\th, z\t1.00e+0\t1.00e+0\tatol 2.00e-5, rtol 1.00e-4; 3 of 10 outside, first at [4]');
    expect(text).toContain('FAIL\tstats\trows 65\th, z\t-\t-\terror: WebGPU validation error: x');
    expect(formatTolerance({ atol: 0, rtol: 0 })).toBe('exact');
  });
});
