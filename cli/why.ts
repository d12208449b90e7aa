/**
 * `npm run -s why -- --method ID`: why a method exists (workers/content/why.ts). On each seed it trains
 * the paper's baseline in its healthy and its diseased regime and the method in the diseased regime,
 * headless on the CPU backend, each run in a child process at nice 10 (`--jobs` at once), and prints
 *   the disease row: the diseased baseline against the healthy one on the pathology metric;
 *   the cure row: the method against the diseased baseline on the outcome its paper claims;
 * each a paired difference over the seeds with its 95 % interval and its verdict under the margin
 * committed with the regime. `--json` prints one JSON object instead. stdout carries only the result;
 * progress goes to stderr. A bad flag, method or seed list exits 2 with one line.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { detectCrash } from '../workers/content/arena/crash';
import { lessonRunConfig } from '../workers/content/lessons';
import { WHY_RUN_IDS, whyOf, whyRunLabel, whyRunSet, type WhyRegime, type WhyRunId } from '../workers/content/why';
import { methodDef } from '../workers/core/methods';
import { SCALAR_METRICS, type MetricRow, type ScalarMetric } from '../workers/core/metrics';
import { createCpuBackend } from '../workers/core/cpuBackend';
import { createTrainer, NonFiniteError } from '../workers/core/trainer';
import { UsageError } from './args';
import { printable } from './printable';
import { runChild, runPool } from './sweepPool';
import { parseWhyArgs, WHY_HELP } from './whyArgs';
import { regimeStats, rowText, statKey, whyRow, type WhyRunResult } from './whySummary';

/** One run on one seed: its flat config keys (the regime's run), the seed and the iterations. */
export interface Job {
  set: Record<string, string>;
  seed: number;
  iters: number;
}

/** What a child process sends back: the run's metric rows (scalars) and where an update went non-finite. */
export interface JobResult {
  rows: Array<Record<ScalarMetric, number>>;
  nonFiniteAt: number | null;
  seconds: number;
}

function regime(id: string): WhyRegime {
  const r = whyOf(id);
  if (!r) throw new UsageError(`--method ${id}: no disease regime`);
  return r;
}

/** Trains one run on one seed (in a child process) and keeps its scalar metric rows. */
export async function trainOne(job: Job): Promise<JobResult> {
  const t0 = Date.now();
  const cfg = lessonRunConfig({ id: 'run', label: 'run', set: job.set, iters: job.iters }, job.seed);
  const trainer = await createTrainer(cfg, createCpuBackend);
  const rows: JobResult['rows'] = [];
  let nonFiniteAt: number | null = null;
  try {
    for (let i = 0; i < job.iters; i++) {
      const row = await trainer.step();
      rows.push(Object.fromEntries(SCALAR_METRICS.map((m) => [m, row[m]])) as Record<ScalarMetric, number>);
    }
  } catch (e) {
    if (!(e instanceof NonFiniteError)) throw e;
    nonFiniteAt = e.iter;
  } finally {
    trainer.destroy();
  }
  return { rows, nonFiniteAt, seconds: (Date.now() - t0) / 1000 };
}

/** The regime's statistics of one run (NaN for a window a run stopped by a non-finite update did not reach) and the arena's crash verdict. */
export function runResult(r: WhyRegime, run: WhyRunId, seed: number, iters: number, res: JobResult): WhyRunResult {
  const values: Record<string, number> = {};
  for (const s of regimeStats(r, iters)) {
    const xs = res.rows.filter((row) => row.iter >= s.from && row.iter <= s.to).map((row) => row[s.metric]);
    values[statKey(s)] =
      xs.length < s.to - s.from + 1 ? NaN : s.agg === 'mean' ? xs.reduce((a, b) => a + b, 0) / xs.length : s.agg === 'max' ? Math.max(...xs) : s.agg === 'min' ? Math.min(...xs) : xs[xs.length - 1]!;
  }
  const crash = detectCrash(res.rows as unknown as MetricRow[], { nonFiniteAt: res.nonFiniteAt });
  return { run, seed, values, crashed: crash.crashed, crashWhy: crash.why, seconds: res.seconds };
}

/**
 * Runs a job in a child process, or reads it from the cache directory (`--cache`): regimes share
 * runs (the collapse methods share their healthy and diseased baselines), and a run is the same
 * function of its config, seed and iterations on this backend.
 */
async function cachedJob(job: Job, cache: string | null): Promise<JobResult> {
  const file = cache ? cacheFile(cache, job) : null;
  if (file && existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as JobResult;
  const res = await runChild<Job, JobResult>(fileURLToPath(import.meta.url), job);
  if (file) {
    mkdirSync(cache!, { recursive: true });
    writeFileSync(file, JSON.stringify(res));
  }
  return res;
}

/** Where `--cache DIR` keeps a run: named by its config keys (in any order), seed and iterations. */
export function cacheFile(cache: string, job: Job): string {
  return join(cache, createHash('sha1').update(JSON.stringify([Object.entries(job.set).sort(), job.seed, job.iters])).digest('hex') + '.json');
}

function keysText(set: Record<string, string>): string {
  return Object.entries(set).map(([k, v]) => `${k}=${v}`).join(' ');
}

async function main(): Promise<void> {
  const args = parseWhyArgs(process.argv.slice(2));
  if (args.help) {
    process.stdout.write(WHY_HELP);
    return;
  }
  if (args.job) {
    process.stdout.write(JSON.stringify(await trainOne(JSON.parse(args.job) as Job)) + '\n');
    return;
  }
  const r = regime(args.method);
  const iters = args.iters ?? r.iters;
  const jobs = WHY_RUN_IDS.flatMap((run) => args.seeds.map((seed) => ({ run, seed })));
  process.stderr.write(`why ${r.method}: 3 runs x ${args.seeds.length} seeds = ${jobs.length} runs of ${iters} iterations\n`);
  let done = 0;
  const t0 = Date.now();
  const results = await runPool(
    jobs,
    args.jobs,
    async (j) => runResult(r, j.run, j.seed, iters, await cachedJob({ set: whyRunSet(r, j.run), seed: j.seed, iters }, args.cache)),
    (x) => process.stderr.write(`${x.run} seed ${x.seed}: ${x.seconds.toFixed(0)} s${x.crashed ? ', crashed' : ''} (${++done}/${jobs.length})\n`),
  );
  const disease = whyRow(r, 'disease', results, args.seeds, iters);
  const cure = whyRow(r, 'cure', results, args.seeds, iters);
  const crashes = Object.fromEntries(WHY_RUN_IDS.map((run) => [run, results.filter((x) => x.run === run && x.crashed).length])) as Record<WhyRunId, number>;
  const also = regimeStats(r, iters)
    .slice(2)
    .map((s) => ({ metric: s.metric, window: { from: s.from, to: s.to, agg: s.agg }, mean: Object.fromEntries(WHY_RUN_IDS.map((run) => [run, avg(results.filter((x) => x.run === run).map((x) => x.values[statKey(s)]!))])) }));
  process.stderr.write(`why ${r.method}: ${((Date.now() - t0) / 60000).toFixed(1)} min\n`);
  if (args.json) {
    const out = {
      method: r.method,
      name: methodDef(r.method).name,
      baseline: r.baseline,
      found: r.found,
      regime: r.regime,
      iters,
      seeds: args.seeds,
      runs: Object.fromEntries(WHY_RUN_IDS.map((run) => [run, whyRunSet(r, run)])),
      disease,
      cure,
      crashes,
      also,
    };
    process.stdout.write(JSON.stringify(out) + '\n');
    return;
  }
  const name = methodDef(r.method).name;
  const lines = [
    `Why ${name} exists (${r.method}): ${r.why}`,
    `Regime: ${r.regime}; ${iters} iterations per run; seeds ${args.seeds.join(', ')}.${r.found ? '' : ' No disease was found on the toys: this is the closest attempt (docs/METHODS_RESULTS.md).'}`,
    ...WHY_RUN_IDS.map((run) => `  ${whyRunLabel(r, run)}: ${keysText(whyRunSet(r, run))}`),
    '',
    rowText('disease', disease),
    rowText('cure', cure),
    '',
    `crashes (the arena's rule, docs/ARENA.md): ${WHY_RUN_IDS.map((run) => `${whyRunLabel(r, run)} ${crashes[run]}/${args.seeds.length}`).join(', ')}`,
    ...also.map((a) => `${a.metric} (${a.window.agg}, iterations ${a.window.from}-${a.window.to}): ${WHY_RUN_IDS.map((run) => `${whyRunLabel(r, run)} ${fmt(a.mean[run]!)}`).join(', ')}`),
    '',
    `per seed (${disease.metric} for the disease row, ${cure.metric} for the cure row):`,
    ...args.seeds.map((seed, i) => `  seed ${seed}: disease ${fmt(disease.b.perSeed[i]!)} → ${fmt(disease.a.perSeed[i]!)}, cure ${fmt(cure.b.perSeed[i]!)} → ${fmt(cure.a.perSeed[i]!)}`),
  ];
  if (r.note) lines.push('', `Note: ${r.note}`);
  process.stdout.write(lines.join('\n') + '\n');
}

const avg = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
const fmt = (x: number) => (!Number.isFinite(x) ? String(x) : Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 1 ? x.toFixed(2) : x.toFixed(3));

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((e) => {
    process.stderr.write(`error: ${printable((e as Error).message)}\n`);
    process.exit(e instanceof UsageError ? 2 : 1);
  });
}
