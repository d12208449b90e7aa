import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';

/**
 * The built app's Content-Security-Policy: scripts and workers only from the app's own origin, no
 * inline scripts, no eval. 'wasm-unsafe-eval' lets the app's own code compile WebAssembly (the CPU
 * backend's backward pass, kernels/model/wasm/backward.ts, a module the worker assembles itself);
 * it allows no JavaScript from strings. Inline style attributes stay allowed (the charts use them);
 * images may be data:/blob: URLs (chart export). Build only: the dev server injects an inline
 * script for hot reload. The page gets it as a <meta> tag; the trainer worker takes its policy from
 * its own response headers, so a host must send it as a header too (README "Reliability"), as `vite
 * preview` does below.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "worker-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

function contentSecurityPolicy(): Plugin {
  return {
    name: 'content-security-policy',
    apply: 'build',
    transformIndexHtml: () => [
      { tag: 'meta', attrs: { 'http-equiv': 'Content-Security-Policy', content: CONTENT_SECURITY_POLICY }, injectTo: 'head-prepend' },
    ],
  };
}

/** Headers a static host must send with every file of the built app (the worker's script above all). */
export const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
};

// The app is static: the worker is bundled as an ES module so it can import the engine.
// `vite build --mode e2e` is the test build: it keeps the fault hooks (window.__playgroundDebug),
// which a production build drops (they test import.meta.env.MODE).
export default defineConfig({
  plugins: [react(), contentSecurityPolicy()],
  worker: { format: 'es' },
  build: { target: 'es2022', outDir: 'dist' },
  server: { port: 5173 },
  preview: { port: 4173, headers: SECURITY_HEADERS },
});
