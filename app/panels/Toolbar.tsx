/**
 * The header toolbar: Share (copies the run's link, with a visible field when the clipboard is not
 * allowed, and options for a classroom link), Export (metrics CSV/JSON, batch JSON, run JSON),
 * Import run, and "Take it to a real run". Each part is a panel a link can hide.
 */
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { countText, createRunFile, metricsToCsv, PANEL_IDS, serializeRunFile, type PanelId } from '../../workers/meta';
import { copyText, downloadBlob, downloadText, fileStem } from '../exporters';
import { readRunFile } from '../runFileClient';
import { currentBatch, useAppStore, type AppState } from '../store';
import { wholeRun, WHOLE_RUN_CAP } from '../store/metricsSlice';
import { currentHash, shareHash, shareLinkFor } from '../urlSync';
import { LessonsMenu } from '../lessons/LessonsMenu';
import { FrameworksDialog } from './FrameworksDialog';
import './Toolbar.css';

/** Batches up to this many trajectories are saved in a run file automatically. */
const AUTO_BATCH_TRAJS = 4096;

function lastIter(s: AppState): number {
  return s.series[s.series.length - 1]?.iter ?? 0;
}

/** The batch to save in a run file: the loaded one, or read from the worker when idle and small. */
async function batchForRunFile(): Promise<ReturnType<typeof currentBatch>> {
  const s = useAppStore.getState();
  if (s.imported) return s.imported.run.batch;
  if (currentBatch(s) || s.phase !== 'idle' || lastIter(s) === 0) return currentBatch(s);
  if (s.config.batch * s.config.group > AUTO_BATCH_TRAJS) return null;
  await s.loadBatch();
  return currentBatch(useAppStore.getState());
}

type CopyResult = { text: string; ok: boolean } | null;

function SharePopover({ onClose, initial }: { onClose: () => void; initial: CopyResult }) {
  const s = useAppStore.getState();
  const iter = useAppStore(lastIter);
  const focus = useAppStore((st) => st.focus);
  const box = useRef<HTMLDivElement>(null);
  // Anchored at the Share button's right edge; on a narrow screen, slide it back into view.
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    const left = el.getBoundingClientRect().left;
    if (left < 8) el.style.right = `${left - 8}px`;
  }, []);
  // Past iteration 0 the link runs there by default: a classroom link that opens on an empty run shows nothing.
  const [withStep, setWithStep] = useState(true);
  const [withFocus, setWithFocus] = useState(true);
  const [hide, setHide] = useState<PanelId[]>(s.hidden);
  const [copied, setCopied] = useState<CopyResult>(initial);
  useEffect(() => setCopied(initial), [initial]);
  // Escape closes it, as it closes the other menus.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') onClose();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [onClose]);
  const stepValue = s.linkStep ?? iter;
  // What the address bar holds (an open Compare or Arena view included), with the popover's choices.
  const link = shareLinkFor(currentHash({ ...s, linkStep: withStep && stepValue > 0 ? stepValue : null, focus: withFocus ? focus : null, hidden: hide }));
  let status = 'Copying…';
  if (copied && copied.text === link) {
    status = copied.ok ? 'Link copied to the clipboard.' : 'The browser did not allow copying: select the link below and copy it.';
  } else if (copied) status = 'Press “Copy link” to copy this link.';
  return (
    <div className="popover share-popover" role="dialog" aria-label="Share link" ref={box}>
      <p className="popover-status" data-testid="share-status">
        {status}
      </p>
      <label className="field field-wide">
        <span>Link to this run</span>
        <input type="text" readOnly value={link} aria-label="Share link" onFocus={(e) => e.currentTarget.select()} />
      </label>
      <fieldset>
        <legend>Classroom link</legend>
        <label className="field-bool">
          <input type="checkbox" checked={withStep && stepValue > 0} disabled={stepValue === 0} onChange={(e) => setWithStep(e.target.checked)} />
          <span>
            {stepValue > 0
              ? `Run to iteration ${stepValue} and pause there (step=${stepValue})`
              : 'Run to the current iteration and pause there (run at least one first)'}
          </span>
        </label>
        {focus && (
          <label className="field-bool">
            <input type="checkbox" checked={withFocus} onChange={(e) => setWithFocus(e.target.checked)} />
            <span>
              Open {focus.kind === 'group' ? 'group' : 'trajectory'} {focus.index} (focus={focus.kind}:{focus.index})
            </span>
          </label>
        )}
        <div className="hide-list">
          <span>Hide:</span>
          {PANEL_IDS.map((id) => (
            <label key={id} className="field-bool">
              <input
                type="checkbox"
                checked={hide.includes(id)}
                onChange={(e) => setHide(e.target.checked ? [...hide, id] : hide.filter((h) => h !== id))}
              />
              <span>{id}</span>
            </label>
          ))}
        </div>
      </fieldset>
      <div className="buttons">
        <button type="button" className="primary" onClick={() => void copyText(link).then((ok) => setCopied({ text: link, ok }))}>
          Copy link
        </button>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
    </div>
  );
}

function ShareButton() {
  const [open, setOpen] = useState(false);
  const [copied, setCopied] = useState<CopyResult>(null);
  const button = useRef<HTMLButtonElement>(null);
  const close = useCallback(() => {
    setOpen(false);
    button.current?.focus();
  }, []);
  const share = () => {
    if (open) return setOpen(false);
    setCopied(null);
    setOpen(true);
    // The link of what the page shows (as the address bar will hold it); the popover offers variants.
    const link = shareLinkFor(shareHash(useAppStore.getState()));
    void copyText(link).then((ok) => setCopied({ text: link, ok }));
  };
  return (
    <div className="menu-anchor">
      <button type="button" onClick={share} aria-expanded={open} ref={button}>
        Share
      </button>
      {open && <SharePopover onClose={close} initial={copied} />}
    </div>
  );
}

/** What the metric exports hold, said plainly: every iteration, or which ones when a cap cut some. */
function exportExtent(): string {
  const w = wholeRun();
  const n = countText(w.rows.length);
  const rows = w.dropped > 0 ? `the last ${n} iterations (the first ${countText(w.dropped)} are past the ${countText(WHOLE_RUN_CAP)}-row limit)` : `all ${n} iterations`;
  const hist = w.withHistograms < w.rows.length ? `; histograms for the last ${countText(w.withHistograms)}` : '';
  return `Metrics and whole-run files hold ${rows}${hist}.`;
}

function ExportMenu() {
  const ref = useRef<HTMLDetailsElement>(null);
  const series = useAppStore((s) => s.series);
  const phase = useAppStore((s) => s.phase);
  const imported = useAppStore((s) => s.imported);
  const [message, setMessage] = useState<string | null>(null);
  const empty = series.length === 0;
  const busy = !imported && phase !== 'idle';
  const close = () => ref.current?.removeAttribute('open');
  // A click outside or Escape closes the menu.
  useEffect(() => {
    const onDown = (e: PointerEvent) => {
      if (ref.current?.open && !ref.current.contains(e.target as Node)) close();
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') close();
    };
    document.addEventListener('pointerdown', onDown);
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('pointerdown', onDown);
      document.removeEventListener('keydown', onKey);
    };
  }, []);
  const stem = () => {
    const s = useAppStore.getState();
    return fileStem(s.config.seed, lastIter(s));
  };

  const exportBatch = async () => {
    setMessage(null);
    const s = useAppStore.getState();
    if (s.imported) {
      const batch = s.imported.run.batch;
      if (!batch) return setMessage('This run file holds no batch.');
      downloadText(JSON.stringify(batch, null, 1), `${stem()}-batch.json`, 'application/json');
      return close();
    }
    // Written by the worker (a large batch takes seconds), so the page stays responsive meanwhile.
    setMessage('Writing the batch as JSON…');
    let blob: Blob | null;
    try {
      blob = await s.batchJson();
    } catch (e) {
      return setMessage(`The batch could not be written: ${e instanceof Error ? e.message : String(e)}`);
    }
    setMessage(null);
    if (!blob) return setMessage('No batch yet: run at least one iteration, and pause.');
    downloadBlob(blob, `${stem()}-batch.json`);
    close();
  };

  const exportRun = async () => {
    const batch = await batchForRunFile().catch(() => null);
    const s = useAppStore.getState();
    const info = s.imported ? s.imported.run.backend : s.backendInfo ? { kind: s.backendInfo.kind, label: s.backendInfo.label } : null;
    const run = createRunFile({ config: s.config, metrics: wholeRun().rows, notes: s.notes, backend: info, batch });
    downloadText(serializeRunFile(run), `${stem()}-run.json`, 'application/json');
    close();
  };

  return (
    <details className="menu" ref={ref} onToggle={() => setMessage(null)}>
      <summary>Export</summary>
      <div className="popover menu-items" role="menu" aria-label="Export">
        <button
          type="button"
          role="menuitem"
          disabled={empty}
          onClick={() => {
            downloadText(metricsToCsv(wholeRun().rows), `${stem()}-metrics.csv`, 'text/csv');
            close();
          }}
        >
          Metrics as CSV
        </button>
        <button
          type="button"
          role="menuitem"
          disabled={empty}
          onClick={() => {
            downloadText(JSON.stringify(wholeRun().rows), `${stem()}-metrics.json`, 'application/json');
            close();
          }}
        >
          Metrics as JSON
        </button>
        <button type="button" role="menuitem" disabled={empty || busy} onClick={() => void exportBatch()}>
          Batch as JSON (last iteration)
        </button>
        <button type="button" role="menuitem" onClick={() => void exportRun()}>
          Whole run as JSON (config, metrics, notes)
        </button>
        {!empty && <p className="menu-hint" data-testid="export-extent">{exportExtent()}</p>}
        <p className="menu-hint">Each chart has its own PNG and SVG buttons.</p>
        {message && <p className="menu-hint">{message}</p>}
      </div>
    </details>
  );
}

function ImportButton() {
  const input = useRef<HTMLInputElement>(null);
  const importRun = useAppStore((s) => s.importRun);
  // What the file reader is doing (read off the main thread, so a large file leaves the page responsive).
  const [progress, setProgress] = useState<string | null>(null);
  return (
    <>
      <button
        type="button"
        onClick={() => input.current?.click()}
        disabled={progress !== null}
        title="A run file exported here, or a real run's metric log: TRL's trainer_state.json, verl's console or file log, a W&B CSV"
      >
        Import run…
      </button>
      {progress && (
        <span role="status" className="import-progress" data-testid="import-progress">
          {progress}
        </span>
      )}
      <input
        ref={input}
        type="file"
        accept="application/json,.json,.jsonl,.log,.txt,.csv,text/csv,text/plain"
        hidden
        data-testid="import-file"
        aria-label="Import a run file"
        onChange={async (e) => {
          const file = e.target.files?.[0];
          e.target.value = '';
          if (!file) return;
          if (file.size > 64 * 1024 * 1024) {
            useAppStore.setState({ importErrors: { fileName: file.name, errors: [{ path: '(file)', message: `too large (${file.size} bytes; at most 64 MiB)` }] } });
            return;
          }
          setProgress(`Reading ${file.name}…`);
          try {
            const parsed = await readRunFile(file, file.name, useAppStore.getState().config, (p) =>
              setProgress(p.stage === 'reading' ? `Reading ${file.name}: ${Math.floor((100 * p.read) / Math.max(1, p.total))} %` : `Checking ${file.name}…`),
            );
            setProgress(null);
            await importRun(parsed, file.name);
          } finally {
            setProgress(null);
          }
        }}
      />
    </>
  );
}

export function Toolbar() {
  const hidden = useAppStore((s) => s.hidden);
  const [realRun, setRealRun] = useState(false);
  const show = (id: PanelId) => !hidden.includes(id);
  return (
    <nav className="toolbar" aria-label="Lessons, share and export">
      <LessonsMenu />
      {show('share') && <ShareButton />}
      {show('export') && <ExportMenu />}
      {show('export') && <ImportButton />}
      {show('frameworks') && (
        <button type="button" onClick={() => setRealRun(true)}>
          Take it to a real run
        </button>
      )}
      {realRun && <FrameworksDialog onClose={() => setRealRun(false)} />}
    </nav>
  );
}
