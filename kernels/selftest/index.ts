/**
 * The kernel self-test: every WGSL kernel run on a device against its CPU reference, on seeded
 * inputs (extremes included), with the largest absolute and relative errors, the tolerance and a
 * verdict per kernel, case and output. The `?selftest` page runs it on the visitor's own adapter so
 * that a GPU that computes oddly shows up, and tests/gpu/selftest.gpu.test.ts runs it in CI.
 * How the errors are measured: kernels/selftest/harness.ts. Adding cases: kernels/selftest/suites.ts.
 *
 * @example
 *   const results = await runSelfTest(device, (r) => console.log(r.kernel, r.case, r.pass));
 *   console.log(summarize(results).line); // "19/19 kernels passed (181/181 checks)"
 */
import { ALL_KERNELS } from '../all';
import { deviceSupports, compileKernels } from '../pipeline';
import { measure, type Errors, type SelfTestCase, type Tolerance } from './harness';
import * as suites from './suites';

export type { Check, SelfTestCase, Tolerance } from './harness';

const PIPELINE_ORDER: readonly string[] = ALL_KERNELS.map((k) => k.label);
const rank = (c: SelfTestCase) => {
  const i = PIPELINE_ORDER.indexOf(c.kernel.label);
  return i < 0 ? PIPELINE_ORDER.length : i;
};

/** Every case, in pipeline order (kernels not in ALL_KERNELS last), each file's order kept within a kernel. */
export const SELF_TEST_CASES: readonly SelfTestCase[] = (Object.values(suites) as SelfTestCase[][])
  .flat()
  .map((c, i) => ({ c, i }))
  .sort((a, b) => rank(a.c) - rank(b.c) || a.i - b.i)
  .map(({ c }) => c);

/** One row of the self-test: one output of one case. */
export interface SelfTestResult {
  /** The kernel's label (its WGSL file's name). */
  kernel: string;
  case: string;
  /** The compared output ("h, z"); empty when the case failed before comparing. */
  output: string;
  tol: Tolerance;
  /** Null when the case failed to run (see `error`). */
  errors: Errors | null;
  pass: boolean;
  /** Why the case could not run: a WGSL compile error, a validation error, a failed readback. */
  error?: string;
}

export interface RunOptions {
  /** Defaults to SELF_TEST_CASES. */
  cases?: readonly SelfTestCase[];
  /** Called before each case starts (for a progress line). */
  onCase?(c: SelfTestCase, index: number, total: number): void;
  /** Stops before the next case; the promise then rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * Runs the cases one after another on `device` (those whose kernels it supports), calling `onResult` for each output as soon as its
 * case finishes; resolves with all rows. A case that throws or raises a WebGPU error becomes one
 * failing row and the run goes on. If the device is lost the run stops and the promise rejects with
 * an Error naming the loss (its reason and message).
 */
export async function runSelfTest(
  device: GPUDevice,
  onResult: (r: SelfTestResult) => void,
  opts: RunOptions = {},
): Promise<SelfTestResult[]> {
  // Kernels needing a feature this device lacks (the subgroup variants) are never dispatched on it.
  const cases = (opts.cases ?? SELF_TEST_CASES).filter((c) => [c.kernel, ...(c.uses ?? [])].every((k) => deviceSupports(device, k)));
  let lost: GPUDeviceLostInfo | null = null;
  void device.lost.then((info) => (lost = info));
  const lostError = (info: GPUDeviceLostInfo) =>
    new Error(`the GPU device was lost (reason: ${info.reason || 'unknown'})${info.message ? `: ${info.message}` : ''}`);
  const results: SelfTestResult[] = [];
  const emit = (r: SelfTestResult) => {
    results.push(r);
    onResult(r);
  };
  for (const [i, c] of cases.entries()) {
    opts.signal?.throwIfAborted();
    if (lost) throw lostError(lost);
    opts.onCase?.(c, i, cases.length);
    const rows = await runCase(device, c);
    // A loss mid-case shows up as a failed readback: give device.lost a turn to settle, then
    // report the loss rather than that.
    if (rows.some((r) => r.error)) await new Promise((resolve) => setTimeout(resolve, 0));
    if (lost) throw lostError(lost);
    for (const r of rows) emit(r);
  }
  return results;
}

async function runCase(device: GPUDevice, c: SelfTestCase): Promise<SelfTestResult[]> {
  const base = { kernel: c.kernel.label, case: c.name };
  const failed = (e: unknown): SelfTestResult[] => [
    { ...base, output: '', tol: { atol: 0, rtol: 0, why: '' }, errors: null, pass: false, error: (e as Error)?.message ?? String(e) },
  ];
  try {
    // Compiles the kernels and checks their WGSL compilation messages, inside error scopes.
    await compileKernels(device, [c.kernel, ...(c.uses ?? [])]);
  } catch (e) {
    return failed(e);
  }
  const scopes = ['validation', 'out-of-memory', 'internal'] as const;
  for (const s of scopes) device.pushErrorScope(s);
  let checks: Awaited<ReturnType<SelfTestCase['run']>> | null = null;
  let thrown: unknown = null;
  try {
    checks = await c.run(device);
  } catch (e) {
    thrown = e;
  }
  const gpuErrors: string[] = [];
  for (const s of [...scopes].reverse()) {
    const err = await device.popErrorScope().catch(() => null);
    if (err) gpuErrors.push(`WebGPU ${s} error: ${err.message}`);
  }
  if (gpuErrors.length) return failed(new Error(gpuErrors.join('; ')));
  if (thrown || !checks) return failed(thrown);
  return checks.map((k) => {
    try {
      const errors = measure(k.actual, k.expected, k.tol);
      return { ...base, output: k.output, tol: k.tol, errors, pass: errors.bad === 0 };
    } catch (e) {
      return { ...base, output: k.output, tol: k.tol, errors: null, pass: false, error: (e as Error).message };
    }
  });
}

export interface SelfTestSummary {
  kernels: Array<{ kernel: string; pass: boolean }>;
  passedKernels: number;
  passedChecks: number;
  checks: number;
  /** "19/19 kernels passed (181/181 checks)" */
  line: string;
}

/** Per-kernel verdicts (a kernel passes when every row of it passes) and the summary line. */
export function summarize(results: readonly SelfTestResult[]): SelfTestSummary {
  const byKernel = new Map<string, boolean>();
  for (const r of results) byKernel.set(r.kernel, (byKernel.get(r.kernel) ?? true) && r.pass);
  const kernels = [...byKernel].map(([kernel, pass]) => ({ kernel, pass }));
  const passedKernels = kernels.filter((k) => k.pass).length;
  const passedChecks = results.filter((r) => r.pass).length;
  return {
    kernels,
    passedKernels,
    passedChecks,
    checks: results.length,
    line: `${passedKernels}/${kernels.length} kernels passed (${passedChecks}/${results.length} checks)`,
  };
}

// ---- formatting, shared by the page and the plain-text report ----

/** 3 significant digits in exponent form; 0 stays "0", a non-finite error reads "inf" / "NaN". */
export function formatError(x: number): string {
  if (x === 0) return '0';
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return 'inf';
  return x.toExponential(2);
}

export function formatTolerance(t: Pick<Tolerance, 'atol' | 'rtol'>): string {
  if (t.atol === 0 && t.rtol === 0) return 'exact';
  return `atol ${formatError(t.atol)}, rtol ${formatError(t.rtol)}`;
}

/** What the report says about the machine; the page fills it from GPUAdapterInfo and navigator. */
export interface SelfTestEnvironment {
  vendor: string;
  architecture: string;
  description: string;
  device?: string;
  isFallbackAdapter: boolean;
  /** The device has subgroups, so the kernels' subgroup versions (kernels/selectors.ts) are tested too. */
  subgroups?: boolean;
  userAgent?: string;
}

/**
 * A plain-text report for an issue: the adapter, the summary (and why the run stopped early, if it
 * did), then one tab-separated line per row.
 */
export function formatReport(
  env: SelfTestEnvironment,
  results: readonly SelfTestResult[],
  o: { when?: Date; stopped?: string } = {},
): string {
  const s = summarize(results);
  const failed = s.kernels.filter((k) => !k.pass).map((k) => k.kernel);
  const lines = [
    'Agentic RL Playground: kernel self-test',
    `Date: ${(o.when ?? new Date()).toISOString()}`,
    `Adapter: vendor "${env.vendor}", architecture "${env.architecture}", description "${env.description}"` +
      (env.device ? `, device "${env.device}"` : '') +
      `, fallback (software) adapter: ${env.isFallbackAdapter ? 'yes' : 'no'}`,
    ...(env.subgroups === undefined
      ? []
      : [`Subgroups: ${env.subgroups ? 'yes (the subgroup versions of the kernels are tested too)' : 'no (the subgroup versions of the kernels are not run: the training would not use them here)'}`]),
    ...(env.userAgent ? [`Browser: ${env.userAgent}`] : []),
    `Result: ${s.line}${failed.length ? `; FAILED: ${failed.join(', ')}` : ''}`,
    ...(o.stopped ? [`Stopped before the end: ${o.stopped}`] : []),
    'Errors: abs = |gpu - cpu|; rel = abs / max(|cpu|, atol/rtol); pass when abs <= atol + rtol |cpu| everywhere.',
    '',
    ['verdict', 'kernel', 'case', 'output', 'max abs', 'max rel', 'tolerance'].join('\t'),
    ...results.map((r) =>
      [
        r.pass ? 'PASS' : 'FAIL',
        r.kernel,
        r.case,
        r.output,
        r.errors ? formatError(r.errors.maxAbs) : '-',
        r.errors ? formatError(r.errors.maxRel) : '-',
        r.error ? `error: ${r.error}` : formatTolerance(r.tol) + (r.errors && r.errors.bad ? `; ${r.errors.bad} of ${r.errors.n} outside, first at [${r.errors.firstBad}]` : ''),
      ].join('\t'),
    ),
  ];
  return lines.join('\n') + '\n';
}
