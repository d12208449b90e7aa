/**
 * Start / Pause / Step / Reset, the pace and "run to iteration N", the backend choice and status,
 * the iteration counter and last metrics. Space and S (App.tsx) do what Start/Pause and Step do.
 */
import { useEffect, useRef, useState } from 'react';
import type { BackendChoice, BackendInfo } from '../../workers/entry/api';
import type { MetricRow } from '../../workers/core/metrics';
import { fmt as chartFmt, percentText } from '../charts/format';
import { useAppStore, type RunPhase } from '../store';
import './RunControls.css';
import { addArrival, iterRate, rateText, type Arrival } from './throughput';

/**
 * The backend status line and its style. While a change of backend is being configured, the
 * backend in use so far is not named: forcing WebGPU compiles the run's kernels first, which took
 * 6-10 s on SwiftShader with 2 cores when every kernel was compiled (4-4.5 s since only the run's
 * are), and all that time the line said "choose GPU to force it".
 */
function backendStatus(info: BackendInfo | null, phase: RunPhase, choice: BackendChoice): { text: string; kind: 'gpu' | 'cpu' | 'none' } {
  if (phase === 'configuring' && choice !== 'auto' && info?.kind !== choice) {
    return { text: choice === 'gpu' ? 'Starting WebGPU: compiling its kernels…' : 'Starting the CPU backend…', kind: 'none' };
  }
  if (!info) return { text: phase === 'configuring' ? 'Starting the trainer…' : 'No backend: see the error above', kind: 'none' };
  if (info.kind === 'gpu') return { text: `WebGPU: ${info.label}${info.isFallbackAdapter ? ' (software adapter, slow)' : ''}`, kind: 'gpu' };
  return { text: `CPU fallback: ${info.fallbackReason ?? 'the CPU backend was chosen'}`, kind: 'cpu' };
}

function phaseText(phase: RunPhase, iter: number, imported: boolean, linkStep: number | null): string {
  if (imported) return 'imported: not re-run';
  switch (phase) {
    case 'idle':
      if (iter > 0 && iter === linkStep) return `paused at step ${linkStep} (from the link)`;
      return iter > 0 ? 'paused' : 'ready';
    case 'configuring':
      return 'configuring…';
    case 'pausing':
      return 'pausing…';
    case 'stepping':
      return 'stepping…';
    case 'resetting':
      return 'resetting…';
    case 'running':
      return 'training';
  }
}

/** Shown while an iteration has been computing for 2 s or more (big batches on the CPU backend). */
/** The pretrained start: a progress bar while it trains, then where it starts (init=pretrained). */
function PretrainLine() {
  const pre = useAppStore((s) => s.pretrain);
  if (!pre) return null;
  const pct = (x: number) => `${Math.round(100 * x)} %`;
  if (!pre.start) {
    return (
      <p className="pretrain-line" data-testid="pretrain">
        Pretraining on demonstrations: <progress max={pre.steps} value={pre.done} aria-label="pretraining progress" /> {pre.done} / {pre.steps} steps
      </p>
    );
  }
  return (
    <p className="pretrain-line" data-testid="pretrain" title={`demonstrator success ${pct(pre.start.demoSuccess)}; ${pre.start.shipped ? 'weights shipped with the page (the same bits as pretraining them here)' : `pretraining took ${(pre.start.ms / 1000).toFixed(1)} s`}`}>
      Pretrained start: success {pct(pre.start.startSuccess)} (random weights {pct(pre.start.scratchSuccess)})
    </p>
  );
}

function workingText(working: { iter: number; since: number; at: number } | null, shownIter: number): string {
  if (!working || working.iter <= shownIter || working.at - working.since < 2000) return '';
  return ` · ${Math.round((working.at - working.since) / 1000)} s into iteration ${working.iter}`;
}

function fmt(v: number, digits = 3): string {
  if (!Number.isFinite(v)) return chartFmt(v);
  if (Math.abs(v) >= 1e6) return v.toExponential(2);
  return v !== 0 && Math.abs(v) < 10 ** -digits ? v.toExponential(1) : v.toFixed(digits);
}

/** Wall-clock iterations per second while the run trains (null otherwise). */
function useIterRate(iter: number, running: boolean): number | null {
  const log = useRef<Arrival[]>([]);
  const [rate, setRate] = useState<number | null>(null);
  useEffect(() => {
    if (!running) {
      log.current = [];
      return;
    }
    log.current = addArrival(log.current, { iter, at: performance.now() });
    setRate(iterRate(log.current));
  }, [iter, running]);
  return running ? rate : null;
}

/** `fromLog`: the row came from an imported verl or TRL log, where a metric it lacks is NaN and is left out. */
function lastMetricsText(row: MetricRow | undefined, fromLog = false): string {
  if (!row) return 'No iterations yet: press Start or Step.';
  const parts: Array<[number, string]> = [
    [row.reward_mean, `reward ${fmt(row.reward_mean)}`],
    [row.success_rate, `success ${percentText(row.success_rate)}`],
    [row.groups_all_equal_frac, `all-equal groups ${fmt(row.groups_all_equal_frac, 2)}`],
    [row.entropy, `entropy ${fmt(row.entropy)}`],
    [row.loss, `loss ${fmt(row.loss, 4)}`],
    [row.ms, `${Math.round(row.ms)} ms compute/iter`],
  ];
  return parts.filter(([v]) => !fromLog || !Number.isNaN(v)).map(([, text]) => text).join(' · ');
}

/** The pace: the trainer waits this long between iterations. */
export const SPEEDS: Array<{ ms: number; label: string }> = [
  { ms: 0, label: 'full speed' },
  { ms: 100, label: 'brisk: 0.1 s between iterations' },
  { ms: 300, label: 'steady: 0.3 s between iterations' },
  { ms: 1000, label: 'slow: 1 s between iterations' },
];

function RunTo({ iter, disabled }: { iter: number; disabled: boolean }) {
  const [target, setTarget] = useState('');
  const start = useAppStore((s) => s.start);
  const n = Number(target);
  const valid = target.trim() !== '' && Number.isInteger(n) && n > iter && n <= 1_000_000;
  return (
    <form
      className="run-to"
      onSubmit={(e) => {
        e.preventDefault();
        if (valid && !disabled) void start(n);
      }}
    >
      <label htmlFor="run-to-input">target iteration</label>
      <input
        id="run-to-input"
        type="number"
        inputMode="numeric"
        min={iter + 1}
        step={1}
        value={target}
        placeholder={String(iter + 10)}
        onChange={(e) => setTarget(e.target.value)}
      />
      <button type="submit" disabled={disabled || !valid}>
        Run to iteration
      </button>
    </form>
  );
}

const BACKENDS: Array<{ value: BackendChoice; label: string }> = [
  { value: 'auto', label: 'auto' },
  { value: 'gpu', label: 'WebGPU' },
  { value: 'cpu', label: 'CPU' },
];

export function RunControls() {
  const phase = useAppStore((s) => s.phase);
  const info = useAppStore((s) => s.backendInfo);
  const backend = useAppStore((s) => s.backend);
  const setBackend = useAppStore((s) => s.setBackend);
  const held = useAppStore((s) => s.linkGate !== null);
  const status = held ? { text: "Not built yet: the link's run waits for your answer above", kind: 'none' as const } : backendStatus(info, phase, backend);
  const last = useAppStore((s) => s.series[s.series.length - 1]);
  const imported = useAppStore((s) => s.imported !== null);
  const importedLog = useAppStore((s) => Boolean(s.imported?.log));
  const linkStep = useAppStore((s) => s.linkStep);
  const notes = useAppStore((s) => s.notes);
  const setNotes = useAppStore((s) => s.setNotes);
  const speed = useAppStore((s) => s.speedDelayMs);
  const runUntil = useAppStore((s) => s.runUntil);
  const working = useAppStore((s) => s.working);
  // An edit waits 250 ms for the next before the run is rebuilt; the attribute lets a test wait for
  // the rebuild rather than click Step just as it disables the buttons.
  const configPending = useAppStore((s) => s.configPending);
  const { start, pause, step, reset, setSpeed } = useAppStore.getState();
  const iter = last?.iter ?? 0;
  const idle = phase === 'idle' && !imported;
  const running = phase === 'running';
  const rate = useIterRate(iter, running);

  return (
    <section className="panel run-controls" aria-labelledby="run-title">
      <h2 id="run-title" title="Keys: Space starts or pauses, S runs one iteration">
        Run
      </h2>
      <div className="buttons">
        <button type="button" className="primary" onClick={() => void start()} disabled={!idle}>
          Start
        </button>
        <button type="button" onClick={() => void pause()} disabled={!running}>
          Pause
        </button>
        <button type="button" onClick={() => void step()} disabled={!idle}>
          Step
        </button>
        <button type="button" onClick={() => void reset()} disabled={!idle && !running}>
          Reset
        </button>
      </div>
      <div className="run-row">
        <div className="field speed-field">
          <label htmlFor="speed-select">Speed</label>
          <select id="speed-select" value={speed} disabled={imported} onChange={(e) => setSpeed(Number(e.target.value))}>
            {SPEEDS.map((o) => (
              <option key={o.ms} value={o.ms}>
                {o.label}
              </option>
            ))}
          </select>
        </div>
        <div className="field backend-field">
          <label htmlFor="backend-select">Backend</label>
          <select
            id="backend-select"
            value={backend}
            disabled={imported || (!idle && phase !== 'configuring')}
            onChange={(e) => setBackend(e.target.value as BackendChoice)}
            title="auto: WebGPU on a hardware adapter, else the CPU (faster than a software adapter)"
          >
            {BACKENDS.map((b) => (
              <option key={b.value} value={b.value}>
                {b.label}
              </option>
            ))}
          </select>
        </div>
      </div>
      <RunTo iter={iter} disabled={!idle} />
      <p className="hint keys-hint">
        Keys: <kbd>Space</kbd> start or pause, <kbd>S</kbd> one iteration.
      </p>
      <p role="status" data-testid="backend-status" className={`backend-status ${status.kind}`} title={status.text}>
        {status.text}
      </p>
      <p className="iter-line">
        Iteration <strong data-testid="iter">{iter}</strong>
        <span className={`phase phase-${imported ? 'imported' : phase}`} data-testid="phase" data-config-pending={configPending}>
          {phaseText(phase, iter, imported, linkStep)}
          {running && runUntil !== null ? ` to iteration ${runUntil}` : ''}
          {running || phase === 'stepping' ? workingText(working, iter) : ''}
        </span>
        {rate !== null && (
          <span className="iter-rate" data-testid="iter-rate" title="Iterations per second, wall clock, over the last few seconds">
            {' '}
            · {rateText(rate)}
          </span>
        )}
      </p>
      <PretrainLine />
      <p className="last-metrics" data-testid="last-metrics">
        {lastMetricsText(last, importedLog)}
      </p>
      <details className="advanced notes-box">
        <summary>Notes{notes ? ' (saved in the run file)' : ''}</summary>
        <textarea
          aria-label="Run notes"
          value={notes}
          maxLength={20000}
          rows={4}
          placeholder="What this run shows; saved with Export → Whole run as JSON."
          onChange={(e) => setNotes(e.target.value)}
        />
      </details>
    </section>
  );
}
