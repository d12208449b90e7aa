/**
 * The page bench's chart comparison: the built app trains on the CPU backend for N seconds
 * (default 20) with the live charts drawn by the SVG chart and then by Recharts (`?charts=recharts`),
 * and prints main-thread long tasks (> 50 ms) and main-thread task time per reward-chart update.
 *
 *   npx tsx --import ./cli/registerRaw.mjs bench/pageCharts.ts [SECONDS]
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright';
import { CHROMIUM_PATH } from '../tests/helpers/chromium';
import { chromiumArgs } from './run';
import { runPageBench } from './pageRun';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const seconds = Number(process.argv[2] ?? 20);
if (!(seconds > 0)) throw new Error(`seconds: expected a positive number, got "${process.argv[2]}"`);

const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: chromiumArgs() });
try {
  const { runs } = await runPageBench(browser, {
    seconds,
    backends: ['cpu'],
    configs: [
      { name: 'svg', hash: '' },
      { name: 'recharts', hash: '?charts=recharts' },
    ],
    root: ROOT,
    log: (m) => console.error(m),
  });
  for (const r of runs) {
    const perUpdate = r.chartUpdates > 0 ? r.mainThread.taskMs / r.chartUpdates : NaN;
    console.log(
      JSON.stringify({
        charts: r.scale,
        seconds: Number(r.seconds.toFixed(1)),
        iterations: r.iterations,
        longTasks: r.longTasks.count,
        longTaskMs: Math.round(r.longTasks.totalMs),
        maxLongTaskMs: Math.round(r.longTasks.maxMs),
        chartUpdatesPerSec: Number(r.chartUpdatesPerSec.toFixed(1)),
        mainThreadTaskMsPerUpdate: Number(perUpdate.toFixed(1)),
        scriptMs: Math.round(r.mainThread.scriptMs),
        ...(r.error ? { error: r.error } : {}),
      }),
    );
  }
} finally {
  await browser.close();
}
