/**
 * `?selftest`: runs every kernel's self-test case (kernels/selftest) on this browser's own WebGPU
 * adapter and shows, per kernel and case, the largest errors against the CPU reference, the
 * tolerance and the verdict, with a plain-text report to paste into an issue. Loaded lazily by
 * main.tsx, so the playground's bundle does not carry it. Runs on the page's thread: the cases are
 * small, and every GPU step is awaited, so the page stays responsive.
 */
import { Fragment, useEffect, useState } from 'react';
import {
  formatError,
  formatReport,
  formatTolerance,
  runSelfTest,
  SELF_TEST_CASES,
  summarize,
  type SelfTestEnvironment,
  type SelfTestResult,
} from '../kernels/selftest';
import { subgroupFeatures } from '../kernels/selectors';
import { copyText } from './exporters';
import { loadPrefs, savePrefs, type Theme } from './store/viewSlice';
import './selftest.css';

/** What stopped the self-test: the step that failed and what the browser said. */
interface Failure {
  step: string;
  message: string;
}

/** A failure on the way to a device, with the step that failed. */
class SetupError extends Error {
  readonly step: string;
  constructor(step: string, message: string) {
    super(message);
    this.step = step;
  }
}

type Phase = 'starting' | 'running' | 'done' | 'stopped';

const ISSUES_HINT = 'please copy the report and attach it to an issue, with your GPU and driver version.';

/** navigator.gpu, then an adapter, then a device: each failure names its step. */
async function openDevice(onAdapter: (env: SelfTestEnvironment) => void): Promise<GPUDevice> {
  const gpu = (navigator as Navigator & { gpu?: GPU }).gpu;
  if (!gpu) {
    throw new SetupError(
      'WebGPU is not available',
      'This browser does not expose WebGPU (navigator.gpu is missing), so there is no GPU to test. Open this page in a browser with WebGPU turned on.',
    );
  }
  let adapter: GPUAdapter | null;
  try {
    adapter = await gpu.requestAdapter();
  } catch (e) {
    throw new SetupError('The adapter request failed', `navigator.gpu.requestAdapter() threw: ${(e as Error).message}`);
  }
  if (!adapter) {
    throw new SetupError(
      'No WebGPU adapter',
      'navigator.gpu.requestAdapter() returned null: WebGPU is present but offers no adapter (it may be turned off, or this GPU or driver is blocklisted).',
    );
  }
  const info = adapter.info as GPUAdapterInfo & { isFallbackAdapter?: boolean };
  // `isFallbackAdapter` moved from GPUAdapter to GPUAdapterInfo; read whichever this browser has.
  const isFallbackAdapter = Boolean(info.isFallbackAdapter ?? (adapter as GPUAdapter & { isFallbackAdapter?: boolean }).isFallbackAdapter);
  // Subgroups where the trainer would use them, so their kernel versions are tested on this GPU.
  const requiredFeatures = subgroupFeatures(gpu, adapter);
  const env: SelfTestEnvironment = {
    vendor: info.vendor,
    architecture: info.architecture,
    description: info.description,
    device: info.device || undefined,
    isFallbackAdapter,
    subgroups: requiredFeatures.includes('subgroups'),
    userAgent: navigator.userAgent,
  };
  onAdapter(env);
  try {
    return await adapter.requestDevice({ label: 'kernel self-test', requiredFeatures });
  } catch (e) {
    throw new SetupError('The device request failed', `adapter.requestDevice() threw: ${(e as Error).message}`);
  }
}

function useTheme(): [Theme, (t: Theme) => void] {
  const [prefs, setPrefs] = useState(loadPrefs);
  useEffect(() => {
    document.documentElement.dataset.theme = prefs.theme;
    document.documentElement.dataset.type = prefs.largeType ? 'large' : 'normal';
  }, [prefs]);
  return [
    prefs.theme,
    (theme) => {
      const next = { ...prefs, theme };
      savePrefs(next);
      setPrefs(next);
    },
  ];
}

/** One row per compared output; failing rows are highlighted and say how many values missed. */
function ResultsTable({ results }: { results: readonly SelfTestResult[] }) {
  return (
    <div className="selftest-table-wrap">
      <table className="selftest-table">
        <caption>One row per compared output. Errors are GPU against the CPU reference.</caption>
        <thead>
          <tr>
            <th scope="col" className="text">Kernel</th>
            <th scope="col" className="text">Case</th>
            <th scope="col" className="text">Output</th>
            <th scope="col">Max abs error</th>
            <th scope="col">Max rel error</th>
            <th scope="col" className="text">Tolerance</th>
            <th scope="col" className="text">Result</th>
          </tr>
        </thead>
        <tbody>
          {results.map((r, i) => (
            <Fragment key={i}>
              <tr data-testid="selftest-row" data-kernel={r.kernel} data-pass={r.pass} className={r.pass ? '' : 'fail'}>
                <th scope="row">{r.kernel}</th>
                <td className="text">{r.case}</td>
                <td className="text">{r.output || '—'}</td>
                <td>{r.errors ? formatError(r.errors.maxAbs) : '—'}</td>
                <td>{r.errors ? formatError(r.errors.maxRel) : '—'}</td>
                <td className="text tol" title={r.tol.why}>
                  {r.error ? '—' : formatTolerance(r.tol)}
                </td>
                <td className={`verdict ${r.pass ? 'pass' : 'fail'}`}>{r.pass ? '✓ pass' : '✗ FAIL'}</td>
              </tr>
              {(r.error || (r.errors && r.errors.bad > 0)) && (
                <tr className="fail detail">
                  <td colSpan={7} className="text selftest-error">
                    {r.error
                      ? `Could not run: ${r.error}`
                      : `${r.errors!.bad} of ${r.errors!.n} values outside the tolerance, the first at index ${r.errors!.firstBad}.`}
                  </td>
                </tr>
              )}
            </Fragment>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function SelfTestPage() {
  const [theme, setTheme] = useTheme();
  const [run, setRun] = useState(0);
  const [phase, setPhase] = useState<Phase>('starting');
  const [env, setEnv] = useState<SelfTestEnvironment | null>(null);
  const [results, setResults] = useState<SelfTestResult[]>([]);
  const [current, setCurrent] = useState('');
  const [failure, setFailure] = useState<Failure | null>(null);
  const [copied, setCopied] = useState<{ ok: boolean; text: string } | null>(null);

  useEffect(() => {
    // One run per mount and per "Run again"; the cleanup stops it and frees the device.
    let disposed = false;
    let device: GPUDevice | null = null;
    const abort = new AbortController();
    const fail = (f: Failure) => {
      if (disposed) return;
      setFailure((old) => old ?? f);
      setPhase('stopped');
    };
    setPhase('starting');
    setResults([]);
    setCurrent('');
    setFailure(null);
    setCopied(null);
    void (async () => {
      try {
        const d = await openDevice((e) => !disposed && setEnv(e));
        if (disposed) return d.destroy();
        device = d;
        void d.lost.then((info) => {
          if (!disposed) fail({ step: 'The GPU device was lost', message: `reason: ${info.reason || 'unknown'}${info.message ? `; ${info.message}` : ''}` });
        });
        setPhase('running');
        await runSelfTest(d, (r) => !disposed && setResults((rs) => [...rs, r]), {
          signal: abort.signal,
          onCase: (c, i, n) => !disposed && setCurrent(`${i + 1}/${n}: ${c.kernel.label}, ${c.name}`),
        });
        if (!disposed) setPhase('done');
      } catch (e) {
        if (disposed) return;
        if (e instanceof SetupError) fail({ step: e.step, message: e.message });
        else if (/device was lost/.test((e as Error).message)) fail({ step: 'The GPU device was lost', message: (e as Error).message });
        else fail({ step: 'The self-test stopped', message: (e as Error)?.message ?? String(e) });
      } finally {
        if (!disposed && device) {
          disposed = true; // our own destroy() is not a loss
          device.destroy();
        }
      }
    })();
    return () => {
      disposed = true;
      abort.abort();
      device?.destroy();
    };
  }, [run]);

  const summary = summarize(results);
  const total = SELF_TEST_CASES.length;
  let status: string;
  if (phase === 'starting') status = 'Opening the WebGPU device…';
  else if (phase === 'running') status = `Running case ${current}`;
  else if (phase === 'done') status = summary.line;
  else if (results.length) {
    const untested = new Set(SELF_TEST_CASES.map((c) => c.kernel.label)).size - summary.kernels.length;
    status = `Stopped: ${summary.passedChecks}/${summary.checks} checks passed before the stop; ${untested} kernels not tested`;
  } else status = 'The self-test did not run.';
  const allPassed = phase === 'done' && summary.passedKernels === summary.kernels.length && summary.passedChecks === summary.checks;
  const report = env ? formatReport(env, results, { stopped: failure ? `${failure.step}. ${failure.message}` : undefined }) : '';

  return (
    <div className="app selftest">
      <header className="app-header">
        <div>
          <h1>Kernel self-test</h1>
          <p>
            Runs every WebGPU kernel of the playground on this browser&apos;s GPU and compares its output with the CPU reference ({total} cases on
            seeded inputs, extremes included). A failure means this GPU or driver computes something differently: {ISSUES_HINT}
          </p>
        </div>
        <div className="header-tools">
          <a href="./">Back to the playground</a>
          <button type="button" className="mini-toggle" aria-pressed={theme === 'dark'} onClick={() => setTheme(theme === 'dark' ? 'light' : 'dark')}>
            Dark theme
          </button>
        </div>
      </header>

      <section className="panel selftest-adapter" aria-labelledby="selftest-adapter-title">
        <h2 id="selftest-adapter-title">Adapter</h2>
        {env ? (
          <dl>
            <dt>Vendor</dt>
            <dd data-testid="adapter-vendor">{env.vendor || '(not reported)'}</dd>
            <dt>Architecture</dt>
            <dd>{env.architecture || '(not reported)'}</dd>
            <dt>Description</dt>
            <dd>{env.description || '(not reported)'}</dd>
            {env.device && (
              <>
                <dt>Device</dt>
                <dd>{env.device}</dd>
              </>
            )}
            <dt>Software (fallback) adapter</dt>
            <dd data-testid="adapter-fallback">{env.isFallbackAdapter ? 'yes: a CPU implementation such as SwiftShader, not your GPU' : 'no'}</dd>
            <dt>Subgroups</dt>
            <dd data-testid="adapter-subgroups">
              {env.subgroups ? 'yes: the subgroup versions of the kernels are tested too' : 'no: the subgroup versions of the kernels are not run'}
            </dd>
          </dl>
        ) : (
          <p className="hint">{failure ? 'No adapter.' : 'Asking the browser for an adapter…'}</p>
        )}
      </section>

      {failure && (
        <div className="alert selftest-failure" role="alert" data-testid="selftest-error">
          <p>
            <strong>{failure.step}.</strong> {failure.message}
          </p>
        </div>
      )}

      <section className="panel" aria-labelledby="selftest-results-title">
        <div className="selftest-head">
          <h2 id="selftest-results-title">Results</h2>
          <p
            role="status"
            data-testid="selftest-summary"
            data-phase={phase}
            className={`selftest-summary ${phase === 'done' || phase === 'stopped' ? (allPassed ? 'ok' : 'bad') : ''}`}
          >
            {status}
          </p>
          <div className="buttons">
            <button type="button" disabled={!env || phase === 'running' || phase === 'starting'} onClick={() => void copyText(report).then((ok) => setCopied({ ok, text: report }))}>
              Copy report
            </button>
            <button type="button" disabled={phase === 'running' || phase === 'starting'} onClick={() => setRun((n) => n + 1)}>
              Run again
            </button>
          </div>
        </div>
        {copied && (
          <p className="hint" role="status" data-testid="copy-status">
            {copied.ok ? 'Report copied to the clipboard.' : 'The browser did not allow copying: select the report below and copy it.'}
          </p>
        )}
        {copied && !copied.ok && <textarea className="selftest-report" readOnly value={copied.text} aria-label="Self-test report" rows={10} />}
        {(results.length > 0 || phase !== 'stopped') && <ResultsTable results={results} />}
        <details className="selftest-notes">
          <summary>How the errors and tolerances are defined</summary>
          <p>
            For each value, abs = |gpu − cpu| and rel = abs / max(|cpu|, atol / rtol): below atol / rtol the absolute part of the tolerance
            decides, so near-zero values do not inflate the relative error. A check passes when abs ≤ atol + rtol·|cpu| for every value;
            “exact” means the values must be identical (token ids, counts, flags). The reasons for each tolerance:
          </p>
          <ul>
            {[...new Map(results.filter((r) => r.tol.why).map((r) => [`${r.kernel}: ${r.tol.why}`, r] as const)).keys()].map((k) => (
              <li key={k}>{k}</li>
            ))}
          </ul>
        </details>
      </section>
    </div>
  );
}
