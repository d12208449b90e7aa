import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';

/**
 * The built app's Content-Security-Policy: scripts and workers only from the app's own origin, no
 * inline scripts, no eval. Inline style attributes stay allowed (the charts
 * use them); images may be data:/blob: URLs (chart export). Build only: the dev server injects an
 * inline script for hot reload.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
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

// The app is static: the worker is bundled as an ES module so it can import the engine.
export default defineConfig({
  plugins: [react(), contentSecurityPolicy()],
  worker: { format: 'es' },
  build: { target: 'es2022', outDir: 'dist' },
  server: { port: 5173 },
  preview: { port: 4173 },
});
