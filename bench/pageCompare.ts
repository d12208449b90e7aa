/**
 * The page bench's Compare view, per chart engine: the built app on the CPU backend, Compare
 * opened, B's learning rate raised, both runs trained to a target iteration (the eight overlaid
 * charts update as the pair's rows arrive: "compare-train"), then the view closed and opened again
 * several times with the same data ("compare-open": eight charts mounted from scratch). An init
 * script counts main-thread long tasks (> 50 ms) and the reward chart's updates; the DevTools
 * protocol gives main-thread task time. Same seed, same settings, so every engine draws the same
 * rows.
 */
import type { Browser, Page } from 'playwright';
import { waitEnabled } from './pageRun';

declare global {
  interface Window {
    __compareBench?: { longTasks: Array<{ start: number; dur: number }>; updates: number[] };
  }
}

/** Plain JavaScript run before the app's scripts (see pageRun.ts for why it is a string). */
const INIT_SCRIPT = `(() => {
  const s = { longTasks: [], updates: [] };
  window.__compareBench = s;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) s.longTasks.push({ start: e.startTime, dur: e.duration });
  }).observe({ type: 'longtask', buffered: true });
  new MutationObserver((muts) => {
    for (const m of muts) {
      if (m.target.getAttribute && m.target.getAttribute('data-testid') === 'compare-reward_mean') s.updates.push(performance.now());
    }
  }).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-points-a'] });
})();`;

export interface CompareBenchOptions {
  /** The app's address, from withBuiltApp. */
  url: string;
  /** A name for the table and the address's query ('?charts=svg', '' for the page's defaults). */
  config: { name: string; query: string };
  /** Iterations each run trains to (beyond 400 the charts draw every k-th row). */
  iterations: number;
  /** Times the view is closed and opened again. */
  opens: number;
  log: (m: string) => void;
}

export interface CompareBenchResult {
  config: string;
  /** Training both runs to `iterations` with the view open. */
  train: { seconds: number; longTasks: number; maxLongTaskMs: number; updates: number; taskMsPerUpdate: number; scriptMs: number };
  /** Each opening: ms from the click to every chart drawn, and its long tasks. */
  opens: Array<{ ms: number; longTasks: number; maxLongTaskMs: number; taskMs: number }>;
  error?: string;
}

/** In the page: every chart of the view draws both runs' lines (a function: the app's CSP forbids eval). */
function chartsDrawn(): boolean {
  const figs = document.querySelectorAll('figure[data-points-a]');
  if (figs.length === 0) return false;
  for (const f of figs) {
    const curves = f.querySelectorAll('path.recharts-line-curve');
    if (curves.length < 2) return false;
    for (const c of curves) if (!(c.getAttribute('d') ?? '').includes('L')) return false;
  }
  return true;
}

async function settle(page: Page): Promise<number> {
  return page.evaluate(() => new Promise<number>((r) => requestAnimationFrame(() => setTimeout(() => r(performance.now()), 0))));
}

export async function runCompareBench(browser: Browser, o: CompareBenchOptions): Promise<CompareBenchResult> {
  const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.addInitScript({ content: INIT_SCRIPT });
  const result: CompareBenchResult = {
    config: o.config.name,
    train: { seconds: NaN, longTasks: 0, maxLongTaskMs: 0, updates: 0, taskMsPerUpdate: NaN, scriptMs: NaN },
    opens: [],
  };
  try {
    // A small batch, so the pair reaches a few hundred iterations in seconds.
    await page.goto(`${o.url}${o.config.query}#v=1&batch=4&group=4`);
    const status = page.getByRole('status');
    await status.filter({ hasText: /^(WebGPU|CPU fallback): / }).waitFor({ timeout: 60_000 });
    await page.getByLabel('Backend').selectOption('cpu');
    await status.filter({ hasText: /^CPU fallback: / }).waitFor({ timeout: 60_000 });
    await waitEnabled(page.getByRole('button', { name: 'Start' }), 60_000);
    const compareTab = page.getByRole('tab', { name: 'Compare' });
    await compareTab.click();
    const view = page.getByRole('tabpanel', { name: 'Compare' });
    const b = view.getByRole('region', { name: /Run B/ });
    const lr = b.getByLabel('learning rate', { exact: true });
    await lr.fill('0.05');
    await lr.blur();
    await view.getByLabel('target iteration for A and B').fill(String(o.iterations));
    const cdp = await context.newCDPSession(page);
    await cdp.send('Performance.enable');
    const metrics = async () =>
      Object.fromEntries(((await cdp.send('Performance.getMetrics')) as { metrics: Array<{ name: string; value: number }> }).metrics.map((m) => [m.name, m.value]));
    const dm = (m0: Record<string, number>, m1: Record<string, number>, k: string) => 1000 * ((m1[k] ?? NaN) - (m0[k] ?? NaN));

    const m0 = await metrics();
    const t0 = await page.evaluate(() => performance.now());
    await view.getByRole('button', { name: 'Run A and B to iteration' }).click();
    const done = `${o.iterations},${o.iterations}`;
    await page.waitForFunction(
      (want) => ['a', 'b'].map((s) => document.querySelector(`[data-testid="compare-status-${s}"]`)?.getAttribute('data-iter')).join(',') === want,
      done,
      { timeout: 600_000, polling: 200 },
    );
    await waitEnabled(view.getByRole('button', { name: 'Start A and B' }), 60_000);
    const t1 = await settle(page);
    const m1 = await metrics();
    const s = await page.evaluate(() => window.__compareBench!);
    const lt = s.longTasks.filter((x) => x.start >= t0 && x.start <= t1).map((x) => x.dur);
    const updates = s.updates.filter((t) => t >= t0 && t <= t1).length;
    result.train = {
      seconds: (t1 - t0) / 1000,
      longTasks: lt.length,
      maxLongTaskMs: lt.length ? Math.max(...lt) : 0,
      updates,
      taskMsPerUpdate: updates > 0 ? dm(m0, m1, 'TaskDuration') / updates : NaN,
      scriptMs: dm(m0, m1, 'ScriptDuration'),
    };
    o.log(`compare: ${o.config.name} trained to ${o.iterations} in ${result.train.seconds.toFixed(1)} s, ${lt.length} long tasks, ${updates} chart updates`);

    for (let i = 0; i < o.opens; i++) {
      await page.getByRole('tab', { name: 'Train' }).click();
      await waitEnabled(page.getByRole('button', { name: 'Start' }), 60_000);
      // The Train view's own mount work is done before the clock starts.
      await page.waitForTimeout(1500);
      const n0 = await metrics();
      const o0 = await page.evaluate(() => performance.now());
      await compareTab.click();
      await page.waitForFunction(chartsDrawn, undefined, { timeout: 60_000, polling: 'raf' });
      const o1 = await settle(page);
      // Long tasks are reported after they end; a short wait lets the last one in.
      await page.waitForTimeout(300);
      const n1 = await metrics();
      const all = await page.evaluate(() => window.__compareBench!.longTasks);
      const olt = all.filter((x) => x.start >= o0 && x.start <= o1).map((x) => x.dur);
      result.opens.push({ ms: o1 - o0, longTasks: olt.length, maxLongTaskMs: olt.length ? Math.max(...olt) : 0, taskMs: dm(n0, n1, 'TaskDuration') });
      o.log(`compare: ${o.config.name} open ${i + 1}: ${(o1 - o0).toFixed(0)} ms, ${olt.length} long tasks`);
    }
  } catch (e) {
    result.error = (e as Error).message.split('\n')[0];
  } finally {
    await context.close();
  }
  if (errors.length) result.error = [result.error, ...errors].filter(Boolean).join('; ');
  return result;
}
