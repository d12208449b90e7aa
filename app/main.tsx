/**
 * Entry point: mounts the React app. The trainer worker is created on first use (trainerClient).
 * `?selftest` mounts the kernel self-test page instead, loaded as its own chunk.
 */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import './styles.css';
import { App } from './App';

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
  root.render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
}
