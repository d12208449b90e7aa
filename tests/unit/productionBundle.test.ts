/**
 * The production build (`vite build`, mode production) as a host serves it: no fault hooks (they
 * exist only in test builds), the page's CSP as a <meta> tag, and the headers a host must send,
 * which `vite preview` sends too.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import config, { CONTENT_SECURITY_POLICY, SECURITY_HEADERS } from '../../vite.config';

const out = mkdtempSync(join(tmpdir(), 'prod-bundle-'));
let assets: Array<{ name: string; text: string }>;

beforeAll(() => {
  const r = spawnSync('npx', ['vite', 'build', '--outDir', out, '--emptyOutDir', '--logLevel', 'error'], { encoding: 'utf8', cwd: process.cwd() });
  expect(r.status, r.stderr).toBe(0);
  assets = readdirSync(join(out, 'assets')).map((name) => ({ name, text: readFileSync(join(out, 'assets', name), 'utf8') }));
}, 240_000);

describe('the production bundle', () => {
  it('has the page script and the worker, and no fault hook in either', () => {
    expect(assets.some((a) => a.name.startsWith('trainer.worker'))).toBe(true);
    for (const hook of ['__playgroundDebug', '__compareDebug', '__arenaDebug', '__arenaArmNaN', 'crashed on purpose']) {
      const holders = assets.filter((a) => a.text.includes(hook)).map((a) => a.name);
      expect(holders, hook).toEqual([]);
    }
  });

  it('the worker forbids code from strings before anything else runs', () => {
    const worker = assets.find((a) => a.name.startsWith('trainer.worker'))!;
    expect(worker.text).toContain('code from strings is refused in the trainer worker');
  });

  it('the page carries the CSP; preview sends it (and nosniff) as headers, which the worker needs', () => {
    const html = readFileSync(join(out, 'index.html'), 'utf8');
    expect(html.replaceAll('&#39;', "'")).toContain(`content="${CONTENT_SECURITY_POLICY}"`);
    // WebAssembly may be compiled (the CPU backward), JavaScript from strings may not.
    expect(/script-src [^;]*/.exec(CONTENT_SECURITY_POLICY)?.[0]).toBe("script-src 'self' 'wasm-unsafe-eval'");
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/'unsafe-eval'/);
    const preview = (config as { preview?: { headers?: Record<string, string> } }).preview;
    expect(preview?.headers).toEqual(SECURITY_HEADERS);
    expect(SECURITY_HEADERS['Content-Security-Policy']).toBe(CONTENT_SECURITY_POLICY);
  });
});
