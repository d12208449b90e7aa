/**
 * The playground page: share/export toolbar, link and import notices, run controls, the task and
 * the advantage estimator on the left, the key charts and the batch inspector on the right; at
 * 1366x900 it fits one screen, and everything else (all methods, more charts, the batch lab) is one
 * click away. A share link can hide any panel (hide=...), by the ids in workers/formats/shareUrl.ts PANEL_IDS.
 */
import { useEffect } from 'react';
import type { PanelId } from '../workers/formats/shareUrl';
import { ArenaView } from './arena/ArenaView';
import { CompareView } from './compare/CompareView';
import { LessonPanel } from './lessons/LessonPanel';
import { PresenterStyle } from './lessons/presenter';
import { ViewTabs } from './compare/ViewTabs';
import { WhyPanel } from './why/WhyPanel';
import { BatchLab } from './batchLab/BatchLab';
import { ExplainDialog } from './explain/ExplainDialog';
import { StepThroughPanel } from './explain/StepThrough';
import { AlarmsPanel } from './panels/AlarmsPanel';
import { Inspector } from './panels/Inspector';
import { EstimatorPicker } from './panels/EstimatorPicker';
import { MethodsPanel } from './panels/MethodsPanel';
import { MetricsCharts } from './panels/MetricsCharts';
import { HiddenPanelsNote, ImportedBanner, ImportErrors, LinkNotice } from './panels/Notices';
import { RunControls } from './panels/RunControls';
import { LinkCostPrompt } from './panels/LinkCostPrompt';
import { TaskPanel } from './panels/TaskPanel';
import { Toolbar } from './panels/Toolbar';
import { useAppStore } from './store';
import { useCompareStore } from './compare/compareStore';
import { startUrlSync } from './urlSync';
import './App.css';
import './oneScreen.css';
import './presenterLayout.css';

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

/** True when a key press belongs to a control (typing, choosing, pressing a button). */
function isControl(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  return target.closest('input, textarea, select, button, summary, a[href], [role="button"], [role="menuitem"], dialog') !== null;
}

/** Space starts or pauses the run, S runs one iteration; not while a control has the key. */
function onShortcut(e: KeyboardEvent): void {
  if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || isControl(e.target)) return;
  if (useCompareStore.getState().tab !== 'train') return;
  const s = useAppStore.getState();
  if (e.key === ' ' || e.code === 'Space') {
    e.preventDefault();
    if (s.phase === 'running') void s.pause();
    else if (s.phase === 'idle') void s.start();
  } else if (e.key === 's' || e.key === 'S') {
    e.preventDefault();
    if (s.phase === 'idle') void s.step();
  }
}

/** Theme and type size: attributes on <html> that the CSS variables follow. */
function useDisplayPrefs(): void {
  const theme = useAppStore((s) => s.theme);
  // Presenter mode (a lesson's) shows large type without changing the saved preference.
  const large = useAppStore((s) => s.largeType || s.presenter);
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
    document.documentElement.dataset.type = large ? 'large' : 'normal';
  }, [theme, large]);
}

function DisplayToggles() {
  const theme = useAppStore((s) => s.theme);
  const large = useAppStore((s) => s.largeType);
  const { setTheme, setLargeType } = useAppStore.getState();
  return (
    <div className="display-toggles" role="group" aria-label="Display">
      <button type="button" className="mini-toggle" aria-pressed={theme === 'dark'} onClick={() => setTheme(theme === 'dark' ? 'light' : 'dark')}>
        Dark theme
      </button>
      <button type="button" className="mini-toggle" aria-pressed={large} onClick={() => setLargeType(!large)}>
        Large type
      </button>
    </div>
  );
}

export function App() {
  useEffect(() => {
    startUrlSync();
    useAppStore.getState().init();
    window.addEventListener('keydown', onShortcut);
    return () => window.removeEventListener('keydown', onShortcut);
  }, []);
  useDisplayPrefs();
  const hidden = useAppStore((s) => s.hidden);
  const tab = useCompareStore((s) => s.tab);
  const lesson = useAppStore((s) => s.lesson !== null);
  const presenter = useAppStore((s) => s.presenter);
  const show = (id: PanelId) => !hidden.includes(id);
  const sidebar = lesson || show('run') || show('task') || show('methods');

  return (
    <div className={`app ${presenter ? 'presenting' : ''} ${tab === 'train' ? 'on-train' : ''}`}>
      <PresenterStyle />
      <header className="app-header">
        <div>
          <h1>Agentic RL Playground</h1>
          <p>Train a tiny language-model policy on toy multi-turn search and tool-use tasks, in your browser, with GRPO and the methods of agentic-RL research switched on and off.</p>
        </div>
        <div className="header-tools">
          <Toolbar />
          <DisplayToggles />
        </div>
      </header>
      <ViewTabs />
      <HiddenPanelsNote />
      <LinkNotice />
      <LinkCostPrompt />
      <ImportErrors />
      <ImportedBanner />
      <ErrorAlert />
      <FailureAlert />
      <RecoveryNotice />
      <ExplainDialog />
      {tab === 'compare' && <WhyPanel />}
      {tab === 'compare' && <CompareView />}
      {tab === 'arena' && <ArenaView />}
      <div id="view-train" role="tabpanel" aria-labelledby="tab-train" hidden={tab !== 'train'}>
        <main className={`layout ${sidebar ? '' : 'no-sidebar'} ${lesson ? 'with-lesson' : ''}`}>
          {sidebar && (
            <div className="sidebar">
              {lesson && <LessonPanel />}
              {show('run') && <RunControls />}
              {show('methods') && <EstimatorPicker />}
              {show('task') && <TaskPanel />}
              {show('methods') && <MethodsPanel />}
            </div>
          )}
          <div className="main-column">
            {show('charts') && <MetricsCharts />}
            {show('charts') && <AlarmsPanel />}
            <Inspector />
            <StepThroughPanel />
            {show('batchlab') && (
              <details className="one-click panel-disclosure" data-testid="batch-lab-disclosure">
                <summary>Batch lab: one batch under several method sets, side by side</summary>
                <BatchLab />
              </details>
            )}
          </div>
        </main>
      </div>
    </div>
  );
}
