/**
 * Notices about what came from outside: problems in the share link, a run file that could not be
 * imported, and the "viewing an imported run" banner. Everything is rendered as text (React
 * escapes it); nothing from a link or a file is ever inserted as HTML.
 */
import { PANEL_IDS } from '../../workers/meta';
import type { ImportedLog } from '../../workers/formats/importRun';
import { useAppStore } from '../store';
import type { ImportedRun } from '../store/viewSlice';
import './Notices.css';

export function LinkNotice() {
  const problems = useAppStore((s) => s.linkProblems);
  const migratedFrom = useAppStore((s) => s.linkMigratedFrom);
  const dismiss = useAppStore((s) => s.dismissLinkProblems);
  if (problems.length === 0 && migratedFrom === null) return null;
  return (
    <div className="notice" data-testid="link-notice">
      {problems.length > 0 && (
        <div role="alert">
          <p className="notice-title">
            This link has {problems.length === 1 ? 'a problem' : `${problems.length} problems`}; the rest of it was applied.
          </p>
          <ul>
            {problems.map((p, i) => (
              <li key={i}>
                <code>{p.key}</code>
                {p.value !== undefined && <span className="notice-value"> = “{p.value}”</span>}: {p.message}
              </li>
            ))}
          </ul>
        </div>
      )}
      {migratedFrom !== null && (
        <p className="notice-title">This link was made by an older version of the playground (v={migratedFrom}) and was brought up to date.</p>
      )}
      <button type="button" onClick={dismiss}>
        Dismiss
      </button>
    </div>
  );
}

export function ImportErrors() {
  const failed = useAppStore((s) => s.importErrors);
  const dismiss = useAppStore((s) => s.dismissImportErrors);
  if (!failed) return null;
  return (
    <div className="notice" data-testid="import-errors">
      <div role="alert">
        <p className="notice-title">Could not import “{failed.fileName}”: nothing was changed.</p>
        <ul>
          {failed.errors.map((e, i) => (
            <li key={i}>
              <code>{e.path}</code>: {e.message}
            </li>
          ))}
        </ul>
      </div>
      <button type="button" onClick={dismiss}>
        Dismiss
      </button>
    </div>
  );
}

/** The banner of an imported verl or TRL log: what was read, which names were mapped, and that the settings are the page's. */
function ImportedLogBanner({ fileName, run, log }: { fileName: string; run: ImportedRun['run']; log: ImportedLog }) {
  const close = useAppStore((s) => s.closeImported);
  const first = run.metrics[0];
  const last = run.metrics[run.metrics.length - 1];
  return (
    <div className="banner" data-testid="imported-banner" aria-live="polite">
      <div>
        <strong>Viewing a {log.framework === 'trl' ? 'TRL' : 'verl'} run</strong> from “{fileName}” ({log.format}):{' '}
        {run.metrics.length} step{run.metrics.length === 1 ? '' : 's'}
        {first && last ? ` (${first.iter} to ${last.iter})` : ''}. The charts show its{' '}
        <span data-testid="imported-log-mapped">{log.mapped.map((m) => `${m.metric} ← ${m.key}`).join(', ')}</span>, and the alarms run
        on them with the playground’s rules.
        {log.nonFinite > 0 ? ` ${log.nonFinite} value${log.nonFinite === 1 ? ' is' : 's are'} NaN or infinite.` : ''} The settings
        panels show this page’s config, not the run’s.
      </div>
      <div className="banner-buttons">
        <button type="button" onClick={() => void close(false)}>
          Close imported run
        </button>
      </div>
    </div>
  );
}

export function ImportedBanner() {
  const imported = useAppStore((s) => s.imported);
  const close = useAppStore((s) => s.closeImported);
  if (!imported) return null;
  const { run, fileName } = imported;
  if (imported.log) return <ImportedLogBanner fileName={fileName} run={run} log={imported.log} />;
  const last = run.metrics[run.metrics.length - 1];
  const when = new Date(run.createdAt);
  return (
    <div className="banner" data-testid="imported-banner" aria-live="polite">
      <div>
        <strong>Viewing an imported run</strong> from “{fileName}”: {run.metrics.length} iteration{run.metrics.length === 1 ? '' : 's'}
        {last ? ` (to iteration ${last.iter})` : ''}, seed {run.config.seed}
        {run.backend ? `, on ${run.backend.kind === 'gpu' ? `WebGPU (${run.backend.label})` : run.backend.label}` : ''}
        {Number.isNaN(when.getTime()) ? '' : `, exported ${when.toLocaleString()}`}. Nothing is re-run: the charts show the
        file’s numbers.
      </div>
      <div className="banner-buttons">
        <button type="button" onClick={() => void close(true)}>
          Run this config live
        </button>
        <button type="button" onClick={() => void close(false)}>
          Close imported run
        </button>
      </div>
    </div>
  );
}

export function HiddenPanelsNote() {
  const hidden = useAppStore((s) => s.hidden);
  const showAll = useAppStore((s) => s.showAllPanels);
  if (hidden.length === 0) return null;
  const names = PANEL_IDS.filter((id) => hidden.includes(id)).join(', ');
  return (
    <p className="hidden-note" data-testid="hidden-note">
      Hidden by this link: {names}.{' '}
      <button type="button" className="link-button" onClick={showAll}>
        Show all panels
      </button>
    </p>
  );
}
