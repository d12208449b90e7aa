/**
 * The `?selftest` page's cases (kernels/selftest) on this machine's adapter: every row passes and
 * every kernel the page promises is covered. Its own device, as the page has, on which each case
 * compiles only its own kernels, so a kernel outside the self-test cannot fail this file.
 */
import { describe, expect, it } from 'vitest';
import { finiteCheckKernel } from '../../kernels/stats/finiteCheck';
import { defineKernel, uniformLayout } from '../../kernels/pipeline';
import { formatError, formatReport, runSelfTest, SELF_TEST_CASES, summarize, type SelfTestCase, type SelfTestResult } from '../../kernels/selftest';
import { requestGpu } from '../../workers/core/gpuDevice';

/** The kernels the self-test covers, in pipeline order (kernels/all.ts). */
const COVERED = [
  'embedProject', 'forwardHidden', 'forwardLogits', 'sample', 'sampleSubgroup', 'tokenStats', 'tokenStatsSubgroup', 'infoGain',
  'trajStats', 'trajGradNorm', 'advantage', 'gae', 'tokenBaseline', 'whiten', 'essScale', 'seqRatio', 'ppoLoss', 'logitGrad', 'logitGradSubgroup',
  'headGrad', 'hiddenGrad', 'slotGrad', 'firstLayerGrad', 'firstLayerGradSubgroup', 'gradNorm', 'adam', 'stats', 'finiteCheck',
];

describe('kernel self-test', () => {
  it(`covers the ${COVERED.length} kernels (at least), in pipeline order`, () => {
    const kernels = [...new Set(SELF_TEST_CASES.map((c) => c.kernel.label))];
    expect(kernels.filter((k) => COVERED.includes(k))).toEqual(COVERED);
  });

  it('passes every case on this adapter', async () => {
    const { device, label } = await requestGpu(globalThis.navigator?.gpu);
    const seen: SelfTestResult[] = [];
    const results = await runSelfTest(device, (r) => seen.push(r));
    expect(seen).toEqual(results);
    // Worst errors per kernel, for the report.
    const worst = new Map<string, { abs: number; rel: number; used: number }>();
    for (const r of results) {
      const w = worst.get(r.kernel) ?? { abs: 0, rel: 0, used: 0 };
      if (r.errors) worst.set(r.kernel, { abs: Math.max(w.abs, r.errors.maxAbs), rel: Math.max(w.rel, r.errors.maxRel), used: Math.max(w.used, r.errors.worst) });
    }
    for (const [k, w] of worst) console.info(`[selftest] ${label} ${k}: max abs ${formatError(w.abs)}, max rel ${formatError(w.rel)}, ${(100 * w.used).toFixed(1)}% of tolerance`);
    const failed = results.filter((r) => !r.pass);
    const env = { vendor: label, architecture: '', description: '', isFallbackAdapter: false };
    expect(failed, formatReport(env, failed)).toEqual([]);
    const n = new Set(results.map((r) => r.kernel)).size;
    expect(summarize(results).line).toBe(`${n}/${n} kernels passed (${results.length}/${results.length} checks)`);
    device.destroy();
  });
});

describe('the self-test runner reports what went wrong, per case', () => {
  const off: SelfTestCase = {
    kernel: finiteCheckKernel,
    name: 'a value off by 1e-3',
    run: async () => [{ output: 'x', actual: [1, 2.001], expected: [1, 2], tol: { atol: 1e-5, rtol: 1e-5, why: 'test' } }],
  };
  const broken = defineKernel({
    label: 'brokenSelftest',
    wgsl: '@compute @workgroup_size(1) fn main() { let x: u32 = 1.5; }',
    workgroupSize: 1,
    bindings: [],
    uniform: uniformLayout('BrokenSelftest', [['n', 'u32']] as const),
    values: () => ({ n: 0 }),
    workgroups: () => 1,
  });
  const uncompiled: SelfTestCase = { kernel: broken, name: 'WGSL that does not compile', run: async () => [] };
  const throws: SelfTestCase = {
    kernel: finiteCheckKernel,
    name: 'a case that throws',
    run: async () => {
      throw new Error('boom');
    },
  };

  it('a mismatch, a compile error and a thrown error are failing rows; the run goes on', async () => {
    const { device } = await requestGpu(globalThis.navigator?.gpu);
    const finiteCase = SELF_TEST_CASES.filter((c) => c.kernel === finiteCheckKernel).at(-1)!;
    const results = await runSelfTest(device, () => {}, { cases: [off, uncompiled, throws, finiteCase] });
    device.destroy();
    expect(results.map((r) => r.pass)).toEqual([false, false, false, true]);
    expect(results[0]!.errors).toMatchObject({ bad: 1, firstBad: 1, n: 2 });
    expect(results[0]!.errors!.maxAbs).toBeCloseTo(1e-3, 9);
    expect(results[1]!.error).toMatch(/brokenSelftest/);
    expect(results[2]!.error).toBe('boom');
    // finiteCheck's own case passes, but its label shares the failing rows above.
    expect(summarize(results).line).toBe('0/2 kernels passed (1/4 checks)');
  });

  it('a lost device stops the run with an error that says so', async () => {
    const { device } = await requestGpu(globalThis.navigator?.gpu);
    const lose: SelfTestCase = {
      kernel: finiteCheckKernel,
      name: 'loses the device',
      run: async (d) => {
        d.destroy();
        await d.lost;
        return [];
      },
    };
    const seen: SelfTestResult[] = [];
    await expect(runSelfTest(device, (r) => seen.push(r), { cases: [lose, off] })).rejects.toThrow(/GPU device was lost \(reason: destroyed\)/);
    expect(seen).toEqual([]);
  });
});
