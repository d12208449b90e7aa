/**
 * The playground page: share/export toolbar, link and import notices, run controls, task and method
 * settings on the left, live charts and the batch inspector on the right. A share link can hide any
 * panel (hide=...), by the ids in workers/shareUrl.ts PANEL_IDS.
 */
import { useEffect } from 'react';
import type { PanelId } from '../workers/shareUrl';
import { Inspector } from './panels/Inspector';
import { MethodsPanel } from './panels/MethodsPanel';
import { MetricsCharts } from './panels/MetricsCharts';
import { HiddenPanelsNote, ImportedBanner, ImportErrors, LinkNotice } from './panels/Notices';
import { RunControls } from './panels/RunControls';
import { TaskPanel } from './panels/TaskPanel';
import { Toolbar } from './panels/Toolbar';
import { useAppStore } from './store';
import { startUrlSync } from './urlSync';

function ErrorAlert() {
  const error = useAppStore((s) => s.error);
  const dismiss = useAppStore((s) => s.dismissError);
  if (!error) return null;
  return (
    <div role="alert" className="alert">
      <span>
        <strong>Trainer error:</strong> {error}
      </span>
      <button type="button" onClick={dismiss}>
        Dismiss
      </button>
    </div>
  );
}

/** The worker crashed or hung: say so, keep the charts, offer a restart from the last snapshot. */
function FailureAlert() {
  const failure = useAppStore((s) => s.failure);
  const restart = useAppStore((s) => s.restartWorker);
  if (!failure) return null;
  const from = failure.snapshotIter > 0 ? `its snapshot of iteration ${failure.snapshotIter}` : 'its initial weights';
  return (
    <div role="alert" className="alert" data-testid="worker-failure">
      <span>
        <strong>{failure.message}</strong> The charts keep the {failure.lastIter} iterations shown. A restart
        starts a new trainer from {from} and replays to iteration {failure.lastIter}, so the run goes on
        where it stopped.
      </span>
      <button type="button" onClick={() => void restart()}>
        Restart from iteration {failure.lastIter}
      </button>
    </div>
  );
}

/** A fault the run recovered from by itself (a lost GPU device). */
function RecoveryNotice() {
  const notice = useAppStore((s) => s.notice);
  const dismiss = useAppStore((s) => s.dismissNotice);
  if (!notice) return null;
  return (
    <div role="status" className="notice" data-testid="recovery-notice">
      <span>{notice}</span>
      <button type="button" onClick={dismiss}>
        Dismiss
      </button>
    </div>
  );
}

export function App() {
  useEffect(() => {
    startUrlSync();
    useAppStore.getState().init();
  }, []);
  const hidden = useAppStore((s) => s.hidden);
  const show = (id: PanelId) => !hidden.includes(id);
  const sidebar = show('run') || show('task') || show('methods');

  return (
    <div className="app">
      <header className="app-header">
        <div>
          <h1>Agentic RL Playground</h1>
          <p>Train a tiny language-model policy with GRPO on a multi-turn search task, in your browser.</p>
        </div>
        <Toolbar />
      </header>
      <HiddenPanelsNote />
      <LinkNotice />
      <ImportErrors />
      <ImportedBanner />
      <ErrorAlert />
      <FailureAlert />
      <RecoveryNotice />
      <main className={`layout ${sidebar ? '' : 'no-sidebar'}`}>
        {sidebar && (
          <div className="sidebar">
            {show('run') && <RunControls />}
            {show('task') && <TaskPanel />}
            {show('methods') && <MethodsPanel />}
          </div>
        )}
        <div className="main-column">
          {show('charts') && <MetricsCharts />}
          <Inspector />
        </div>
      </main>
    </div>
  );
}
