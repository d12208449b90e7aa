/**
 * The Compare tab: run A (a snapshot of the playground's settings) and run B (a copy edited here)
 * from the same seed, each in its own worker, with the pair's Start / Pause / Reset / run-to, and
 * their curves overlaid. Settings on the left, curves on the right; one column on a phone.
 */
import { toggleBlocker, toggledMethods } from '../methodToggle';
import { useMemo, useState } from 'react';
import { CONFIG_FIELDS, getField, methodRegistry, TASK_KNOBS, type ConfigKey, type RunConfig } from '../../workers/meta';
import type { ParamSpec } from '../../workers/core/methods/params';
import type { BackendInfo } from '../../workers/entry/api';
import { ParamControl } from '../panels/ParamControl';
import { SIDE_NAME, SIDES, useCompareStore, type CompareRun } from './compareStore';
import { CompareCharts, RUN_STYLE } from './CompareCharts';
import { configDiff, fieldLabel, legendText, methodNames } from './diff';
import { compareSummary } from './summary';
import './CompareView.css';

const METHODS = Object.values(methodRegistry);
/** B's settings shown first: the ones a comparison usually varies. */
const MAIN_KEYS: ConfigKey[] = ['lr', 'clipLow', 'clipHigh', 'group', 'batch', 'epochs', 'minibatches', 'klCoef', 'lossAgg', 'temperature', 'maxGradNorm'];
const ALL_TASK_KNOBS = new Set<string>(Object.values(TASK_KNOBS).flat());
/** What A's card lists. */
const A_KEYS: ConfigKey[] = ['task', 'lr', 'clipLow', 'clipHigh', 'batch', 'group', 'epochs', 'klCoef', 'lossAgg'];

function useBusy(): boolean {
  return useCompareStore((s) => SIDES.some((side) => s[side].phase !== 'idle' && s[side].phase !== 'failed'));
}

function backendText(info: BackendInfo | null): string {
  if (!info) return 'not started';
  return info.kind === 'gpu' ? `WebGPU: ${info.label}` : 'CPU';
}

function phaseText(run: CompareRun): string {
  const iter = run.series[run.series.length - 1]?.iter ?? 0;
  switch (run.phase) {
    case 'idle':
      return iter > 0 ? 'paused' : 'ready';
    case 'running':
      return 'training';
    case 'failed':
      return 'failed';
    default:
      return `${run.phase}…`;
  }
}

function RunErrors() {
  const a = useCompareStore((s) => s.a);
  const b = useCompareStore((s) => s.b);
  const notice = useCompareStore((s) => s.notice);
  const { restart, dismissError, dismissNotice } = useCompareStore.getState();
  const runs = { a, b };
  return (
    <>
      {notice && (
        <div role="status" className="notice">
          <span>{notice}</span>
          <button type="button" onClick={dismissNotice}>
            Dismiss
          </button>
        </div>
      )}
      {SIDES.map((side) => {
        const { error, phase, series } = runs[side];
        if (!error) return null;
        const failed = phase === 'failed';
        return (
          <div key={side} role="alert" className="alert" data-testid={`compare-error-${side}`}>
            <span>
              <strong>{error}</strong>
              {failed && ` The charts keep run ${SIDE_NAME[side]}'s ${series.length} iterations; the other run goes on.`}
            </span>
            {failed ? (
              <button type="button" onClick={() => void restart(side)}>
                Restart run {SIDE_NAME[side]}
              </button>
            ) : (
              <button type="button" aria-label={`Dismiss the run ${SIDE_NAME[side]} error`} onClick={() => dismissError(side)}>
                Dismiss
              </button>
            )}
          </div>
        );
      })}
    </>
  );
}

function PairControls() {
  const a = useCompareStore((s) => s.a);
  const b = useCompareStore((s) => s.b);
  const runUntil = useCompareStore((s) => s.runUntil);
  const { start, pause, reset, setSeed } = useCompareStore.getState();
  const [target, setTarget] = useState('');
  const busy = useBusy();
  const running = a.phase === 'running' || b.phase === 'running';
  const iter = Math.min(a.series[a.series.length - 1]?.iter ?? 0, b.series[b.series.length - 1]?.iter ?? 0);
  const n = Number(target);
  const valid = target.trim() !== '' && Number.isInteger(n) && n > 0 && n <= 1_000_000;
  return (
    <section className="panel run-controls" aria-labelledby="compare-run-title">
      <h2 id="compare-run-title">Compare: run A and B</h2>
      <div className="buttons">
        <button type="button" className="primary" onClick={() => void start()} disabled={busy}>
          Start A and B
        </button>
        <button type="button" onClick={() => void pause()} disabled={!running}>
          Pause A and B
        </button>
        <button type="button" onClick={() => void reset()} disabled={busy && !running}>
          Reset A and B
        </button>
      </div>
      <form
        className="run-to"
        onSubmit={(e) => {
          e.preventDefault();
          if (valid && !busy) void start(n);
        }}
      >
        <label htmlFor="compare-run-to">target iteration for A and B</label>
        <input
          id="compare-run-to"
          type="number"
          inputMode="numeric"
          min={1}
          step={1}
          value={target}
          placeholder={String(iter + 10)}
          onChange={(e) => setTarget(e.target.value)}
        />
        <button type="submit" disabled={busy || !valid}>
          Run A and B to iteration
        </button>
      </form>
      <div className="knobs compare-seed">
        <ParamControl
          fieldKey="seed"
          spec={{ ...CONFIG_FIELDS.seed, label: 'seed (A and B)', doc: 'Both runs use this seed: the same tasks, initial weights and first batch.' } as ParamSpec}
          value={a.config.seed}
          disabled={busy}
          onCommit={(_k, v) => setSeed(Number(v))}
        />
      </div>
      <ul className="compare-status">
        {SIDES.map((side) => {
          const run = side === 'a' ? a : b;
          const last = run.series[run.series.length - 1]?.iter ?? 0;
          return (
            <li key={side} data-testid={`compare-status-${side}`} data-iter={last} data-phase={run.phase}>
              <span className={`run-swatch run-swatch-${side}`} aria-hidden="true" />
              <strong>{SIDE_NAME[side]}</strong>: iteration {last} · {phaseText(run)}
              {run.phase === 'running' && runUntil !== null ? ` to iteration ${runUntil}` : ''} · {backendText(run.backendInfo)}
            </li>
          );
        })}
      </ul>
      <p className="hint">Each run has its own trainer worker on the playground's backend choice. A change to a run's settings starts it again from iteration 0.</p>
    </section>
  );
}

function shown(cfg: RunConfig, key: string): string {
  const v = getField(cfg, key);
  return typeof v === 'number' ? String(Number(v.toPrecision(6))) : String(v);
}

function RunACard() {
  const a = useCompareStore((s) => s.a.config);
  const busy = useBusy();
  const takeA = useCompareStore((s) => s.takeA);
  return (
    <section className="panel compare-side" aria-labelledby="compare-a-title">
      <h2 id="compare-a-title">
        <span className="run-swatch run-swatch-a" aria-hidden="true" /> Run A: the playground's settings
      </h2>
      <dl className="compare-facts">
        <div className="compare-fact">
          <dt>methods</dt>
          <dd>{methodNames(a.methods)}</dd>
        </div>
        {A_KEYS.map((k) => (
          <div key={k} className="compare-fact">
            <dt>{CONFIG_FIELDS[k].label}</dt>
            <dd>{shown(a, k)}</dd>
          </div>
        ))}
      </dl>
      <button type="button" onClick={takeA} disabled={busy}>
        Take A from the playground again
      </button>
      <p className="hint">A is a snapshot: later changes in the Train tab reach it only when you take it again (B keeps its own changes).</p>
    </section>
  );
}

function MethodsB({ config, disabled }: { config: RunConfig; disabled: boolean }) {
  const setMethodsB = useCompareStore((s) => s.setMethodsB);
  const setFieldB = useCompareStore((s) => s.setFieldB);
  const [error, setError] = useState<string | null>(null);
  const active = config.methods;
  return (
    <details className="compare-methods">
      <summary>B's methods: {methodNames(active)}</summary>
      <p className="hint">A greyed method is not available with the methods that are on (hover it for why).</p>
      <div className="compare-toggles">
        {METHODS.map((m) => {
          const on = active.includes(m.id);
          const blocker = toggleBlocker(config, m.id);
          return (
            <div key={m.id}>
              <label className="toggle" title={blocker?.text ?? m.idea}>
                <input
                  type="checkbox"
                  checked={on}
                  disabled={disabled || blocker !== null}
                  aria-describedby={blocker ? `compare-blocker-${m.id}` : undefined}
                  onChange={() => setError(setMethodsB(toggledMethods(active, m.id)))}
                />
                <span>{m.name}</span>
              </label>
              {blocker && (
                <span id={`compare-blocker-${m.id}`} className="visually-hidden">
                  {blocker.text}
                </span>
              )}
            </div>
          );
        })}
      </div>
      {error && <p className="field-error">{error}</p>}
      {METHODS.filter((m) => active.includes(m.id) && Object.keys(m.params).length > 0).map((m) => (
        <div key={m.id} className="compare-method-params">
          <h3 className="stage-title">{m.name}</h3>
          <div className="knobs">
            {Object.entries(m.params).map(([p, spec]) => (
              <ParamControl
                key={p}
                fieldKey={`${m.id}.${p}`}
                spec={spec as ParamSpec}
                value={getField(config, `${m.id}.${p}`)}
                disabled={disabled}
                onCommit={setFieldB}
                owner={m.name}
              />
            ))}
          </div>
        </div>
      ))}
    </details>
  );
}

function RunBEditor() {
  const a = useCompareStore((s) => s.a.config);
  const b = useCompareStore((s) => s.b.config);
  const setFieldB = useCompareStore((s) => s.setFieldB);
  const busy = useBusy();
  const changes = useMemo(() => configDiff(a, b), [a, b]);
  const own = TASK_KNOBS[b.task] as readonly string[];
  const others = (Object.keys(CONFIG_FIELDS) as ConfigKey[]).filter(
    (k) => k !== 'task' && k !== 'seed' && !MAIN_KEYS.includes(k) && (!ALL_TASK_KNOBS.has(k) || own.includes(k)),
  );
  const control = (k: ConfigKey) => (
    <ParamControl key={k} fieldKey={k} spec={CONFIG_FIELDS[k] as ParamSpec} value={getField(b, k)} disabled={busy} onCommit={setFieldB} />
  );
  return (
    <section className="panel compare-side" aria-labelledby="compare-b-title">
      <h2 id="compare-b-title">
        <span className="run-swatch run-swatch-b" aria-hidden="true" /> Run B: a copy you edit
      </h2>
      <div className="compare-diff" data-testid="compare-diff" aria-live="polite">
        {changes.length === 0 ? (
          <p className="hint">Same settings as A: change something below.</p>
        ) : (
          <>
            <p className="compare-diff-title">B differs from A in:</p>
            <ul>
              {changes.map((c) => (
                <li key={c.key} title={c.key}>
                  {c.key === 'methods' ? (
                    <>
                      methods {methodNames(c.a.split('+'))} → <strong>{methodNames(c.b.split('+'))}</strong>
                    </>
                  ) : (
                    <>
                      {fieldLabel(c.key)} {c.a} → <strong>{c.b}</strong>
                    </>
                  )}
                </li>
              ))}
            </ul>
          </>
        )}
      </div>
      {busy && <p className="hint">Pause to change B; a change starts B again from iteration 0.</p>}
      <fieldset className="compare-fields">
        <legend>B's settings</legend>
        <div className="knobs">{MAIN_KEYS.map(control)}</div>
        <details className="advanced">
          <summary>B's other settings</summary>
          <div className="knobs">{others.map(control)}</div>
        </details>
      </fieldset>
      <MethodsB config={b} disabled={busy} />
    </section>
  );
}

function Results() {
  const a = useCompareStore((s) => s.a);
  const b = useCompareStore((s) => s.b);
  const [threshold, setThreshold] = useState(0.8);
  const changes = useMemo(() => configDiff(a.config, b.config), [a.config, b.config]);
  const legendA = legendText('A', changes);
  const legendB = legendText('B', changes);
  return (
    <section className="panel charts" aria-labelledby="compare-charts-title">
      <h2 id="compare-charts-title">A and B, overlaid (seed {a.config.seed})</h2>
      <p className="compare-summary" data-testid="compare-summary" role="status">
        {compareSummary(a.series, b.series, threshold)}
      </p>
      <div className="compare-key">
        <span>
          <svg width="28" height="8" aria-hidden="true">
            <line x1="0" y1="4" x2="28" y2="4" stroke={RUN_STYLE.a.color} strokeWidth={RUN_STYLE.a.width} />
          </svg>{' '}
          {legendA} ({RUN_STYLE.a.look})
        </span>
        <span>
          <svg width="28" height="8" aria-hidden="true">
            <line x1="0" y1="4" x2="28" y2="4" stroke={RUN_STYLE.b.color} strokeWidth={RUN_STYLE.b.width} strokeDasharray={RUN_STYLE.b.dash} />
          </svg>{' '}
          {legendB} ({RUN_STYLE.b.look})
        </span>
        <label className="compare-threshold">
          success threshold{' '}
          <select value={threshold} onChange={(e) => setThreshold(Number(e.target.value))}>
            {[0.5, 0.6, 0.7, 0.8, 0.9, 0.95].map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
      </div>
      <CompareCharts a={a.series} b={b.series} legendA={legendA} legendB={legendB} />
    </section>
  );
}

/** The Compare tab's content. */
export function CompareView() {
  return (
    <div id="view-compare" role="tabpanel" aria-labelledby="tab-compare" className="compare-view">
      <RunErrors />
      <main className="layout">
        <div className="sidebar">
          <PairControls />
          <RunACard />
          <RunBEditor />
        </div>
        <div className="main-column">
          <Results />
        </div>
      </main>
    </div>
  );
}
