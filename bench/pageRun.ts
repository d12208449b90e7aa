/**
 * Section 5, driven from Node: the built app (vite build, served by vite preview) in Chromium.
 * For each config (opened as a share link) and backend: pick it, Start, let it train for a while,
 * Pause. An init script counts main-thread long tasks (PerformanceObserver 'longtask', > 50 ms),
 * updates of the reward chart (MutationObserver on `[data-testid="chart-reward"]`'s data-points)
 * and animation frames.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright';
import { build, preview } from 'vite';
import { lessonStepHash } from '../app/lessons/links';
import { LESSONS } from '../workers/content/lessons';
import { CHROMIUM_PATH } from '../tests/helpers/chromium';
import { summarize } from './lib/stats';
import { browserThreads, cpuParts } from './lib/threadCpu';
import type { LessonReadyResult, PageRunResult } from './lib/types';

declare global {
  interface Window {
    __pageBench?: { longTasks: Array<{ start: number; dur: number }>; chartUpdates: number[]; frames: number[] };
  }
}

/**
 * Plain JavaScript (a string, not a function: Playwright would serialize the transpiled function,
 * helpers and all): runs before the app's own scripts in every page of the context.
 */
const INIT_SCRIPT = `(() => {
  const s = { longTasks: [], chartUpdates: [], frames: [] };
  window.__pageBench = s;
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) s.longTasks.push({ start: e.startTime, dur: e.duration });
    }).observe({ type: 'longtask', buffered: true });
  } catch (e) {
    s.noLongTask = String(e);
  }
  new MutationObserver((muts) => {
    for (const m of muts) {
      if (m.target.getAttribute && m.target.getAttribute('data-testid') === 'chart-reward') s.chartUpdates.push(performance.now());
    }
  }).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-points'] });
  const frame = (t) => {
    s.frames.push(t);
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
})();`;

export async function waitEnabled(l: Locator, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await l.isEnabled())) {
    if (Date.now() > deadline) throw new Error(`"${await l.textContent()}" still disabled after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The paused run's batch into the inspector: small batches load by themselves on Pause, larger
 * ones on "Load the batch". Timed from then to the reward matrix's rows, with the long tasks of
 * that window.
 */
async function measureBatchLoad(page: Page): Promise<NonNullable<PageRunResult['batchLoad']>> {
  const t0 = await page.evaluate(() => performance.now());
  const button = page.getByRole('button', { name: 'Load the batch' });
  const matrix = page.getByTestId('reward-matrix').locator('tbody tr').first();
  await Promise.race([button.waitFor({ timeout: 60_000 }), matrix.waitFor({ timeout: 60_000 })]);
  if (await button.isVisible()) await button.click();
  await matrix.waitFor({ timeout: 120_000 });
  const t1 = await page.evaluate(() => new Promise<number>((r) => requestAnimationFrame(() => setTimeout(() => r(performance.now()), 0))));
  await page.waitForTimeout(300);
  const s = await page.evaluate(() => window.__pageBench!);
  const lt = s.longTasks.filter((x) => x.start >= t0).map((x) => x.dur);
  const trajectories = await page.getByTestId('reward-matrix').locator('button.cell').count();
  const more = Number((await page.getByTestId('group-view').textContent())?.match(/Showing the first \d+ of (\d+) groups/)?.[1] ?? 0);
  const perGroup = await page.getByTestId('reward-matrix').locator('tbody tr').first().locator('button.cell').count();
  return { trajectories: more ? more * perGroup : trajectories, ms: t1 - t0, longTasks: lt.length, maxMs: lt.length ? Math.max(...lt) : 0 };
}

/**
 * A lesson step's ready time: its link opened in a fresh page on the CPU backend, from navigation to
 * every "what you should see" line of the step measured (no line still "…"), which since the page
 * trains a step on the lesson's seeds means on every seed (app/lessons/seedPool.ts). Step 1 of each lesson:
 * its lines are about its own run, so they need no earlier step. The browser's CPU time in that window
 * is split by thread where /proc can be read (lib/threadCpu.ts).
 */
async function measureLessonReady(browser: Browser, url: string, log: (m: string) => void): Promise<LessonReadyResult[]> {
  const out: LessonReadyResult[] = [];
  for (const lesson of LESSONS) {
    const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
    const page = await context.newPage();
    try {
      const before = browserThreads(CHROMIUM_PATH);
      const t0 = Date.now();
      await page.goto(url + lessonStepHash(lesson, 0, { backend: 'cpu' }));
      const lines = page.getByTestId('lesson-step-1').locator('[data-testid^="lesson-claim-"]');
      await lines.first().waitFor({ timeout: 60_000 });
      await page.waitForFunction(
        () => {
          const ls = document.querySelectorAll('[data-testid="lesson-step-1"] [data-testid^="lesson-claim-"]');
          return ls.length > 0 && [...ls].every((l) => l.getAttribute('data-state') !== 'pending');
        },
        undefined,
        { timeout: 120_000, polling: 50 },
      );
      const ms = Date.now() - t0;
      const after = browserThreads(CHROMIUM_PATH);
      const states = await lines.evaluateAll((ls) => ls.map((l) => l.getAttribute('data-state') ?? ''));
      out.push({ lesson: lesson.id, ms, lines: states.length, held: states.filter((x) => x === 'ok').length, ...(before && after ? { cpu: cpuParts(before, after) } : {}) });
      log(`page: lesson ${lesson.id} step 1 ready in ${ms} ms (${states.filter((x) => x === 'ok').length}/${states.length} lines hold)`);
    } catch (e) {
      out.push({ lesson: lesson.id, ms: NaN, lines: 0, held: 0, error: (e as Error).message.split('\n')[0] });
    } finally {
      await context.close();
    }
  }
  return out;
}

export interface PageBenchOptions {
  seconds: number;
  backends: Array<'cpu' | 'gpu'>;
  /** Each run's config: a name for the table and a share link's hash ('' for the defaults). */
  configs: Array<{ name: string; hash: string }>;
  root: string;
  log: (m: string) => void;
  /** An app already served; without it the app is built and served for this call. */
  url?: string;
  /** Also time each lesson's first step (default true). */
  lessons?: boolean;
}

/**
 * The app built for production into a temporary folder and served by vite preview; `use` gets the
 * server's address. The folder and server go when `use` ends.
 */
export async function withBuiltApp<T>(root: string, log: (m: string) => void, use: (url: string) => Promise<T>): Promise<T> {
  const outDir = mkdtempSync(join(tmpdir(), 'bench-dist-'));
  const t0 = Date.now();
  // The bench page's Vite dev server (earlier sections) sets NODE_ENV=development in this process,
  // and build() honours it: the app then ships React's development build, ~6x the main-thread
  // script of the production one. The page section measures what users get.
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    await build({ root, mode: 'production', logLevel: 'warn', build: { outDir, emptyOutDir: true } });
  } finally {
    if (nodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = nodeEnv;
  }
  log(`page: app built in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const server = await preview({ root, logLevel: 'warn', build: { outDir }, preview: { port: 0, host: '127.0.0.1', strictPort: false } });
  try {
    const url = server.resolvedUrls?.local[0];
    if (!url) throw new Error('vite preview gave no URL');
    return await use(url);
  } finally {
    await server.close();
    rmSync(outDir, { recursive: true, force: true });
  }
}

/** The page section; with `o.url`, on an app already built and served (withBuiltApp). */
export async function runPageBench(browser: Browser, o: PageBenchOptions): Promise<{ runs: PageRunResult[]; notes: string[]; lessonReady?: LessonReadyResult[] }> {
  if (o.url) return benchBuiltPage(browser, o.url, o);
  return withBuiltApp(o.root, o.log, (url) => benchBuiltPage(browser, url, o));
}

async function benchBuiltPage(browser: Browser, url: string, o: PageBenchOptions): Promise<{ runs: PageRunResult[]; notes: string[]; lessonReady?: LessonReadyResult[] }> {
  const notes: string[] = [];
  const runs: PageRunResult[] = [];
  let lessonReady: LessonReadyResult[] | undefined;
  for (const { name: scale, hash } of o.configs) for (const backend of o.backends) {
    const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.addInitScript({ content: INIT_SCRIPT });
    try {
      await page.goto(url + hash);
      const status = page.getByRole('status');
      await status.filter({ hasText: /^(WebGPU|CPU fallback): / }).waitFor({ timeout: 60_000 });
      const autoStatus = (await status.textContent()) ?? '';
      if (backend === o.backends[0] && scale === o.configs[0]!.name) notes.push(`With backend "auto" the app said: "${autoStatus.trim()}"`);
      await page.getByLabel('Backend').selectOption(backend);
      await status.filter({ hasText: backend === 'gpu' ? /^WebGPU: / : /^CPU fallback: / }).waitFor({ timeout: 60_000 });
      const start = page.getByRole('button', { name: 'Start' });
      await waitEnabled(start, 60_000);
      const statusText = ((await status.textContent()) ?? '').trim();
      const iter0 = Number((await page.getByTestId('iter').textContent()) ?? 0);
      // Main-thread accounting from the DevTools protocol: busy wall time per kind and CPU time.
      const cdp = await context.newCDPSession(page);
      await cdp.send('Performance.enable');
      const metrics = async () =>
        Object.fromEntries(((await cdp.send('Performance.getMetrics')) as { metrics: Array<{ name: string; value: number }> }).metrics.map((m) => [m.name, m.value]));
      const m0 = await metrics();
      const tStart = await page.evaluate(() => performance.now());
      await start.click();
      await page.waitForTimeout(o.seconds * 1000);
      const tEnd = await page.evaluate(() => performance.now());
      const m1 = await metrics();
      const dm = (k: string) => 1000 * ((m1[k] ?? NaN) - (m0[k] ?? NaN));
      await page.getByRole('button', { name: 'Pause' }).click();
      await waitEnabled(start, 120_000);
      const iter1 = Number((await page.getByTestId('iter').textContent()) ?? 0);
      const batchLoad = await measureBatchLoad(page);
      const s = await page.evaluate(() => window.__pageBench!);
      const inWin = (t: number) => t >= tStart && t <= tEnd;
      const lt = s.longTasks.filter((x) => inWin(x.start)).map((x) => x.dur);
      const seconds = (tEnd - tStart) / 1000;
      const chart = s.chartUpdates.filter(inWin).length;
      const frames = s.frames.filter(inWin).length;
      const lts = summarize(lt);
      const sorted = [...lt].sort((a, b) => a - b);
      runs.push({
        scale,
        backend,
        statusText,
        seconds,
        iterations: iter1 - iter0,
        longTasks: {
          count: lt.length,
          totalMs: lt.reduce((a, b) => a + b, 0),
          maxMs: lt.length ? lts.max : 0,
          p95Ms: sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(0.95 * sorted.length))]! : 0,
        },
        mainThread: {
          taskMs: dm('TaskDuration'),
          scriptMs: dm('ScriptDuration'),
          layoutMs: dm('LayoutDuration'),
          styleMs: dm('RecalcStyleDuration'),
          cpuMs: dm('ThreadTime'),
        },
        chartUpdates: chart,
        chartUpdatesPerSec: chart / seconds,
        frames,
        framesPerSec: frames / seconds,
        batchLoad,
        ...(errors.length ? { error: errors.join('; ') } : {}),
      });
      o.log(
        `page: ${scale} ${backend} ${iter1 - iter0} iterations in ${seconds.toFixed(1)} s, ${lt.length} long tasks, ${(chart / seconds).toFixed(1)} chart updates/s; ` +
          `batch of ${batchLoad.trajectories} in ${batchLoad.ms.toFixed(0)} ms, longest task ${batchLoad.maxMs.toFixed(0)} ms`,
      );
    } catch (e) {
      runs.push({
        scale, backend, statusText: '', seconds: 0, iterations: 0, longTasks: { count: 0, totalMs: 0, maxMs: 0, p95Ms: 0 },
        mainThread: { taskMs: NaN, scriptMs: NaN, layoutMs: NaN, styleMs: NaN, cpuMs: NaN },
        chartUpdates: 0, chartUpdatesPerSec: 0, frames: 0, framesPerSec: 0, error: (e as Error).message.split('\n')[0],
      });
    } finally {
      await context.close();
    }
  }
  if (o.backends.includes('cpu') && o.lessons !== false) lessonReady = await measureLessonReady(browser, url, o.log);
  return { runs, notes, ...(lessonReady ? { lessonReady } : {}) };
}
