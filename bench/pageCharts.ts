/**
 * The page bench's chart comparison, each chart engine on the same data in the production build on
 * the CPU backend:
 * - live: the app trains for SECONDS (default 20) with the live charts on the SVG chart
 *   (`?charts=svg`) and on Recharts (`?charts=recharts`); main-thread long tasks (> 50 ms) and
 *   main-thread task time per reward-chart update.
 * - compare: the Compare view's pair trained to ITER iterations with the view open, then the view
 *   opened again OPENS times (bench/pageCompare.ts), with `?charts=svg` and `?charts=recharts`.
 * - lesson: the Advantage Collapse lesson's steps 1-3 loaded from the Lessons menu
 *   (bench/pageLesson.ts) with every chart on the SVG chart, with only the lesson charts on
 *   Recharts (`?charts=svg,lesson:recharts`) and with every chart on Recharts.
 * Each measurement runs REPEATS times (default 3) so the spread shows; the machine's load average
 * is printed with every run, since other work on the machine inflates every figure.
 *
 *   npx tsx --import ./cli/registerRaw.mjs bench/pageCharts.ts [SECONDS] [--views live,compare,lesson]
 *     [--repeats 3] [--iterations 300] [--opens 3]
 */
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright';
import { CHROMIUM_PATH } from '../tests/helpers/chromium';
import { chromiumArgs } from './run';
import { runPageBench, withBuiltApp } from './pageRun';
import { runCompareBench } from './pageCompare';
import { runLessonBench } from './pageLesson';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const VIEWS = ['live', 'compare', 'lesson'] as const;
/**
 * The lesson view's engines: all on the SVG chart, only the lesson charts on Recharts (the live
 * charts, which update beside them while a step trains, stay on the SVG chart: this is the choice
 * VIEW_ENGINE.lesson makes), and every chart on Recharts.
 */
const LESSON_CONFIGS = [
  { name: 'svg', query: '?charts=svg' },
  { name: 'lesson-recharts', query: '?charts=svg,lesson:recharts' },
  { name: 'recharts', query: '?charts=recharts' },
];

function parse(argv: string[]) {
  const o = { seconds: 20, views: [...VIEWS] as string[], repeats: 3, iterations: 300, opens: 3 };
  const positive = (flag: string, v: string | undefined) => {
    const n = Number(v);
    if (!(n > 0) || !Number.isInteger(n)) throw new Error(`${flag}: expected a positive integer, got "${v}"`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--views') {
      o.views = (argv[++i] ?? '').split(',').filter(Boolean);
      const bad = o.views.filter((v) => !(VIEWS as readonly string[]).includes(v));
      if (bad.length || o.views.length === 0) throw new Error(`--views: expected some of ${VIEWS.join(',')}, got "${argv[i]}"`);
    } else if (a === '--repeats') o.repeats = positive(a, argv[++i]);
    else if (a === '--iterations') o.iterations = positive(a, argv[++i]);
    else if (a === '--opens') o.opens = positive(a, argv[++i]);
    else if (!a.startsWith('--') && i === 0) {
      o.seconds = Number(a);
      if (!(o.seconds > 0)) throw new Error(`seconds: expected a positive number, got "${a}"`);
    } else throw new Error(`unknown argument "${a}" (see the usage at the top of bench/pageCharts.ts)`);
  }
  return o;
}

const o = parse(process.argv.slice(2));
const load = () => loadavg().map((x) => Number(x.toFixed(1)));
const log = (m: string) => console.error(m);
const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: chromiumArgs() });
try {
  await withBuiltApp(ROOT, log, async (url) => {
    for (let rep = 1; rep <= o.repeats; rep++) {
      if (o.views.includes('live')) {
        const { runs } = await runPageBench(browser, {
          url,
          seconds: o.seconds,
          backends: ['cpu'],
          configs: [
            { name: 'svg', hash: '?charts=svg' },
            { name: 'recharts', hash: '?charts=recharts' },
          ],
          root: ROOT,
          log,
          lessons: false,
        });
        for (const r of runs) {
          const perUpdate = r.chartUpdates > 0 ? r.mainThread.taskMs / r.chartUpdates : NaN;
          console.log(
            JSON.stringify({
              view: 'live',
              rep,
              charts: r.scale,
              loadavg: load(),
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
      }
      if (o.views.includes('compare')) {
        for (const config of [
          { name: 'svg', query: '?charts=svg' },
          { name: 'recharts', query: '?charts=recharts' },
        ]) {
          const r = await runCompareBench(browser, { url, config, iterations: o.iterations, opens: o.opens, log });
          const round = (x: number) => Number(x.toFixed(1));
          console.log(
            JSON.stringify({
              view: 'compare',
              rep,
              charts: r.config,
              loadavg: load(),
              iterations: o.iterations,
              train: { ...r.train, seconds: round(r.train.seconds), maxLongTaskMs: Math.round(r.train.maxLongTaskMs), taskMsPerUpdate: round(r.train.taskMsPerUpdate), scriptMs: Math.round(r.train.scriptMs) },
              opens: r.opens.map((x) => ({ ms: Math.round(x.ms), longTasks: x.longTasks, maxLongTaskMs: Math.round(x.maxLongTaskMs), taskMs: Math.round(x.taskMs) })),
              ...(r.error ? { error: r.error } : {}),
            }),
          );
        }
      }
      if (o.views.includes('lesson')) {
        for (const config of LESSON_CONFIGS) {
          const r = await runLessonBench(browser, { url, config, log });
          const round = (x: number) => Number(x.toFixed(1));
          console.log(
            JSON.stringify({
              view: 'lesson',
              rep,
              charts: r.config,
              loadavg: load(),
              steps: r.steps.map((x) => ({ ...x, readyMs: Math.round(x.readyMs), maxLongTaskMs: Math.round(x.maxLongTaskMs), taskMs: Math.round(x.taskMs), drawMs: round(x.drawMs), drawMaxLongTaskMs: Math.round(x.drawMaxLongTaskMs) })),
              ...(r.error ? { error: r.error } : {}),
            }),
          );
        }
      }
    }
  });
} finally {
  await browser.close();
}
