/** The playground page: run controls, task and method settings on the left, live charts on the right. */
import { useEffect } from 'react';
import { MethodsPanel } from './panels/MethodsPanel';
import { MetricsCharts } from './panels/MetricsCharts';
import { RunControls } from './panels/RunControls';
import { TaskPanel } from './panels/TaskPanel';
import { useAppStore } from './store';

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

export function App() {
  useEffect(() => {
    useAppStore.getState().init();
  }, []);

  return (
    <div className="app">
      <header className="app-header">
        <h1>Agentic RL Playground</h1>
        <p>Train a tiny language-model policy with GRPO on a multi-turn search task, in your browser.</p>
      </header>
      <ErrorAlert />
      <main className="layout">
        <div className="sidebar">
          <RunControls />
          <TaskPanel />
          <MethodsPanel />
        </div>
        <MetricsCharts />
      </main>
    </div>
  );
}
