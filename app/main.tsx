/**
 * Entry point: mounts the React app. The trainer worker is created on first use (trainerClient),
 * which for the page's own is before the first render.
 * `?selftest` mounts the kernel self-test page instead, loaded as its own chunk.
 */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import './styles.css';
import { App } from './App';
import { watchSeedPoolEarly } from './lessons/seedPool';
import { useAppStore } from './store';
import { startUrlSync } from './urlSync';

const root = createRoot(document.getElementById('root')!);

if (new URLSearchParams(location.search).has('selftest')) {
  import('./SelfTestPage').then(
    ({ SelfTestPage }) =>
      root.render(
        <StrictMode>
          <SelfTestPage />
        </StrictMode>,
      ),
    (e: unknown) =>
      root.render(
        <p role="alert" className="alert">
          The self-test page could not be loaded: {(e as Error)?.message ?? String(e)}
        </p>,
      ),
  );
} else {
  // The link is applied and its run built before the first render (App's effect would do both after
  // it): the page's worker loads, and a lesson's seeds train, while React draws the page.
  startUrlSync();
  useAppStore.getState().init();
  watchSeedPoolEarly();
  root.render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
}
