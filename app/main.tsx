/**
 * Entry point: mounts the React app. Its trainer workers were started by ./boot.ts, the first
 * module evaluated; the link's run is built and its lesson's seeds queued before the first render.
 * `?selftest` mounts the kernel self-test page instead, loaded as its own chunk.
 */
// First: the trainer workers start loading while the rest of the bundle is evaluated.
import './boot';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import './styles.css';
import { App } from './App';
import { watchSeedPoolEarly } from './lessons/seedPool';
import { useAppStore } from './store';
import { trainersReady } from './trainerClient';
import { startUrlSync } from './urlSync';

/** The longest a lesson link's page waits for its workers before it draws itself. */
const LESSON_DRAW_WAIT_MS = 200;

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
  const draw = () =>
    root.render(
      <StrictMode>
        <App />
      </StrictMode>,
    );
  // A lesson link's calls to its workers (./boot.ts started them) are handed over by this thread
  // once a worker has run its script: the first render, half a second of one task, would hold them
  // that long. So the page draws once they are, or after LESSON_DRAW_WAIT_MS, when a busy machine
  // is slower to start a worker than the page is to draw.
  if (useAppStore.getState().lesson) void trainersReady(LESSON_DRAW_WAIT_MS).then(draw);
  else draw();
}
