/**
 * The page bench's lesson summary charts, per chart engine: the built app on the CPU backend, the
 * Advantage Collapse lesson opened from the Lessons menu (step 1: three metric charts, one run each),
 * then "Next step" twice (step 2: two charts with two runs each; step 3: three charts with two runs
 * each, the most any lesson step draws). Each step trains its run on screen and the lesson's other
 * seeds in workers; its charts appear once every seed of every run is in. Per step, from the click until every line is measured
 * and every chart draws its lines and bands, plus TAIL_MS after:
 * - main-thread long tasks (> 50 ms, PerformanceObserver 'longtask') and main-thread task time
 *   (DevTools protocol), which include the training's own main-thread work and the live charts;
 * - the charts' draw time: the renderer main thread's tasks (a trace) from the task that puts the
 *   first chart figure in the page to the one after which every chart is drawn. Nothing trains
 *   then (every seed is in), so that is the charts' own work, with the step's lines beside them.
 */
import type { Browser, Page } from 'playwright';
import { isDumpStat, LESSONS, type SeriesStat } from '../workers/content/lessons';
import { waitEnabled } from './pageRun';

declare global {
  interface Window {
    __lessonBench?: { longTasks: Array<{ start: number; dur: number }>; chartsIn: number[]; drawnAt?: number };
  }
}

/** Long tasks are reported after they end, and a chart may draw late: the window runs on this long. */
const TAIL_MS = 2000;
const LESSON_ID = 'collapse';
const STEPS = [0, 1, 2];

/**
 * Plain JavaScript run before the app's scripts (see pageRun.ts for why it is a string). A chart
 * figure put in the page is a user-timing mark, so the trace shows the task that did it.
 */
const INIT_SCRIPT = `(() => {
  const s = { longTasks: [], chartsIn: [] };
  window.__lessonBench = s;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) s.longTasks.push({ start: e.startTime, dur: e.duration });
  }).observe({ type: 'longtask', buffered: true });
  const mark = () => {
    s.chartsIn.push(performance.now());
    performance.mark('lesson-charts-in');
  };
  new MutationObserver((muts) => {
    for (const m of muts) {
      if (m.type === 'attributes') {
        if (m.target.matches('figure.lesson-seeds-chart')) return mark();
        continue;
      }
      for (const n of m.addedNodes) {
        if (n.nodeType === 1 && (n.matches('figure.lesson-seeds-chart') || n.querySelector('figure.lesson-seeds-chart'))) return mark();
      }
    }
  }).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-runs'] });
})();`;

export interface LessonBenchOptions {
  /** The app's address, from withBuiltApp. */
  url: string;
  /** A name for the table and the address's query ('?charts=svg', '' for the page's defaults). */
  config: { name: string; query: string };
  log: (m: string) => void;
}

export interface LessonStepBench {
  step: number;
  charts: number;
  runs: number;
  /** Click to every line measured and every chart drawn. */
  readyMs: number;
  /** Long tasks from the click to TAIL_MS after the charts are drawn. */
  longTasks: number;
  maxLongTaskMs: number;
  /** Main-thread task time in that window. */
  taskMs: number;
  /** Main-thread task time from the first chart figure in the page to every chart drawn. */
  drawMs: number;
  /** Main-thread tasks in that interval. */
  drawTasks: number;
  /** Long tasks overlapping that interval (the charts' own, and the lines' beside them). */
  drawLongTasks: number;
  drawMaxLongTaskMs: number;
}

export interface LessonBenchResult {
  config: string;
  steps: LessonStepBench[];
  error?: string;
}

/**
 * In the page: step `n`'s lines all measured and its `want` charts each drawing a line with points
 * and a band per run, on either engine (a function: the app's CSP forbids eval). Marks the moment.
 */
function stepDrawn([n, want]: [number, number]): boolean {
  const step = document.querySelector(`[data-testid="lesson-step-${n}"]`);
  if (!step) return false;
  const lines = step.querySelectorAll('[data-testid^="lesson-claim-"]');
  if (lines.length === 0 || [...lines].some((l) => l.getAttribute('data-state') === 'pending')) return false;
  const figs = step.querySelectorAll('figure.lesson-seeds-chart');
  if (figs.length !== want) return false;
  for (const f of figs) {
    const runs = (f.getAttribute('data-runs') ?? '').split(',').length;
    const curves = [...f.querySelectorAll('path.recharts-line-curve')].filter((c) => (c.getAttribute('d') ?? '').includes('L'));
    const bands = [...f.querySelectorAll('path.xy-band, .xy-band path')].filter((c) => (c.getAttribute('d') ?? '').includes('Z'));
    if (curves.length < runs || bands.length < runs) return false;
  }
  performance.mark('lesson-charts-drawn');
  window.__lessonBench!.drawnAt = performance.now();
  return true;
}

async function settle(page: Page): Promise<number> {
  return page.evaluate(() => new Promise<number>((r) => requestAnimationFrame(() => setTimeout(() => r(performance.now()), 0))));
}

interface TraceEvent {
  name: string;
  cat: string;
  ph: string;
  ts: number;
  dur?: number;
  pid: number;
  tid: number;
}

/**
 * The renderer main thread's task time between the last 'lesson-charts-in' mark before the last
 * 'lesson-charts-drawn' mark and that mark: every top-level task overlapping the interval, counted
 * once (the one that puts the figures in begins before its mark).
 */
function drawTime(trace: Buffer): { ms: number; tasks: number } {
  const events = (JSON.parse(trace.toString('utf8')) as { traceEvents: TraceEvent[] }).traceEvents;
  const marks = (name: string) => events.filter((e) => e.cat.includes('blink.user_timing') && e.name === name);
  const drawn = marks('lesson-charts-drawn').at(-1);
  if (!drawn) throw new Error('the trace has no lesson-charts-drawn mark');
  const into = marks('lesson-charts-in').filter((e) => e.pid === drawn.pid && e.tid === drawn.tid && e.ts <= drawn.ts).at(-1);
  if (!into) throw new Error('the trace has no lesson-charts-in mark before the charts were drawn');
  const tasks = events
    .filter((e) => e.ph === 'X' && e.pid === drawn.pid && e.tid === drawn.tid && (e.name === 'RunTask' || e.name === 'ThreadControllerImpl::RunTask'))
    .filter((e) => e.ts + (e.dur ?? 0) >= into.ts && e.ts <= drawn.ts)
    .sort((a, b) => a.ts - b.ts);
  let end = -Infinity;
  let us = 0;
  let n = 0;
  for (const t of tasks) {
    if (t.ts + (t.dur ?? 0) <= end) continue;
    us += t.dur ?? 0;
    end = t.ts + (t.dur ?? 0);
    n++;
  }
  return { ms: us / 1000, tasks: n };
}

export async function runLessonBench(browser: Browser, o: LessonBenchOptions): Promise<LessonBenchResult> {
  const lesson = LESSONS.find((l) => l.id === LESSON_ID);
  if (!lesson) throw new Error(`no lesson "${LESSON_ID}" (bench/pageLesson.ts names it)`);
  const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.addInitScript({ content: INIT_SCRIPT });
  const result: LessonBenchResult = { config: o.config.name, steps: [] };
  let tracing = false;
  try {
    await page.goto(`${o.url}${o.config.query}#v=1&batch=4&group=4`);
    const status = page.getByRole('status').filter({ hasText: /^(WebGPU|CPU fallback): / });
    await status.waitFor({ timeout: 60_000 });
    await page.getByLabel('Backend').selectOption('cpu');
    await page.getByRole('status').filter({ hasText: /^CPU fallback: / }).waitFor({ timeout: 60_000 });
    await waitEnabled(page.getByRole('button', { name: 'Start' }), 60_000);
    await page.waitForTimeout(1500);
    const cdp = await context.newCDPSession(page);
    await cdp.send('Performance.enable');
    const metrics = async () =>
      Object.fromEntries(((await cdp.send('Performance.getMetrics')) as { metrics: Array<{ name: string; value: number }> }).metrics.map((m) => [m.name, m.value]));

    for (const i of STEPS) {
      const step = lesson.steps[i]!;
      const stats = step.claims.flatMap((id) => {
        const c = lesson.claims.find((x) => x.id === id)!;
        return [c.a, c.b];
      });
      // As app/lessons/SeedsChart.tsx: a chart per metric that the step's lines read over iterations.
      const charts = new Set(stats.flatMap((s) => (typeof s === 'object' && !isDumpStat(s) ? [(s as SeriesStat).metric] : []))).size;
      await browser.startTracing(page, { categories: ['toplevel', 'blink.user_timing'] });
      tracing = true;
      const m0 = await metrics();
      const t0 = await page.evaluate(() => performance.now());
      if (i === 0) {
        await page.getByText('Lessons', { exact: true }).click();
        await page.getByRole('menu', { name: 'Lessons' }).getByRole('menuitem', { name: `${LESSONS.indexOf(lesson) + 1}. ${lesson.title}` }).click();
      } else {
        await page.getByTestId('lesson-panel').getByRole('button', { name: 'Next step' }).click();
      }
      await page.waitForFunction(stepDrawn, [i + 1, charts] as [number, number], { timeout: 300_000, polling: 'raf' });
      const t1 = await settle(page);
      await page.waitForTimeout(TAIL_MS);
      const m1 = await metrics();
      const trace = await browser.stopTracing();
      tracing = false;
      const s = await page.evaluate(() => window.__lessonBench!);
      const lt = s.longTasks.filter((x) => x.start >= t0 && x.start <= t1 + TAIL_MS).map((x) => x.dur);
      const draw = drawTime(trace);
      const drawnAt = s.drawnAt ?? NaN;
      const chartsIn = s.chartsIn.filter((t) => t <= drawnAt).at(-1) ?? NaN;
      // A task overlapping the interval: the one that brings the last run begins before its mark.
      const dlt = s.longTasks.filter((x) => x.start + x.dur >= chartsIn && x.start <= drawnAt).map((x) => x.dur);
      const runList = await page.getByTestId(`lesson-step-${i + 1}`).locator('figure.lesson-seeds-chart').first().getAttribute('data-runs');
      const runs = (runList ?? '').split(',').length;
      result.steps.push({
        step: i + 1,
        charts,
        runs,
        readyMs: t1 - t0,
        longTasks: lt.length,
        maxLongTaskMs: lt.length ? Math.max(...lt) : 0,
        taskMs: 1000 * ((m1.TaskDuration ?? NaN) - (m0.TaskDuration ?? NaN)),
        drawMs: draw.ms,
        drawTasks: draw.tasks,
        drawLongTasks: dlt.length,
        drawMaxLongTaskMs: dlt.length ? Math.max(...dlt) : 0,
      });
      o.log(
        `lesson: ${o.config.name} step ${i + 1} (${charts} charts x ${runs} runs) ready in ${(t1 - t0).toFixed(0)} ms, ` +
          `${lt.length} long tasks, charts drawn in ${draw.ms.toFixed(1)} ms of main thread over ${draw.tasks} tasks (${dlt.length} long)`,
      );
    }
  } catch (e) {
    result.error = (e as Error).message.split('\n')[0];
  } finally {
    if (tracing) await browser.stopTracing().catch(() => undefined);
    await context.close();
  }
  if (errors.length) result.error = [result.error, ...errors].filter(Boolean).join('; ');
  return result;
}
