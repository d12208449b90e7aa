/**
 * `npm run -s arena`: ARLArena's dimensions against each other, headless (docs/ARENA.md). Every cell
 * of the spec (workers/content/arena/dimensions.ts) runs on every seed, each run in a child process at nice 10
 * (`--jobs` at once) on the CPU backend; the table gives per cell the final and early success with
 * 95 % intervals, the difference to the first cell paired by seed, crashes (workers/content/arena/crash.ts),
 * the peak of ARLArena's diagnosis neg_out_grad_share, and the cost. stdout carries only the table
 * (or JSON lines with --json); progress goes to stderr.
 */
import { fileURLToPath } from 'node:url';
import { detectCrash } from '../workers/content/arena/crash';
import { arenaCells, arenaSpecToText, cellConfig, parseArenaSpec } from '../workers/content/arena/dimensions';
import { createCpuBackend } from '../workers/core/cpuBackend';
import type { MetricRow } from '../workers/core/metrics';
import { createTrainer, NonFiniteError } from '../workers/core/trainer';
import { UsageError } from './args';
import { ARENA_HELP, parseArenaArgs } from './arenaArgs';
import { arenaJsonLines, arenaMarkdown, summarizeArena, type ArenaRun } from './arenaSummary';
import { exitWithError } from './printable';
import { runChild, runPool } from './sweepPool';

interface Job {
  spec: string;
  cell: string;
  seed: number;
}

async function runOne(job: Job): Promise<ArenaRun> {
  const spec = parseArenaSpec(job.spec);
  const cell = arenaCells(spec).cells.find((c) => c.id === job.cell);
  if (!cell) throw new Error(`arena job: no cell ${job.cell} in the spec`);
  const t0 = Date.now();
  const trainer = await createTrainer(cellConfig(spec, cell, job.seed), createCpuBackend);
  const rows: MetricRow[] = [];
  let nonFiniteAt: number | null = null;
  try {
    for (let i = 0; i < spec.iters; i++) rows.push(await trainer.step());
  } catch (e) {
    if (!(e instanceof NonFiniteError)) throw e;
    nonFiniteAt = e.iter;
  }
  return {
    cell: cell.id,
    seed: job.seed,
    success: rows.map((r) => r.success_rate),
    negOut: rows.map((r) => r.neg_out_grad_share),
    rollouts: rows.reduce((a, r) => a + r.rollouts, 0) / Math.max(rows.length, 1),
    seconds: (Date.now() - t0) / 1000,
    crash: detectCrash(rows, { nonFiniteAt }),
  };
}

async function main(): Promise<void> {
  const args = parseArenaArgs(process.argv.slice(2));
  if (args.help) {
    process.stdout.write(ARENA_HELP);
    return;
  }
  if (args.job) {
    process.stdout.write(JSON.stringify(await runOne(JSON.parse(args.job) as Job)) + '\n');
    return;
  }
  const text = arenaSpecToText(args.spec);
  const { cells, skipped } = arenaCells(args.spec);
  if (!cells.length) throw new UsageError(`arena: every cell was skipped (${skipped.map((s) => `${s.label}: ${s.why}`).join('; ')})`);
  const jobs: Job[] = cells.flatMap((c) => args.spec.seeds.map((seed) => ({ spec: text, cell: c.id, seed })));
  process.stderr.write(`arena: ${cells.length} cells x ${args.spec.seeds.length} seeds = ${jobs.length} runs of ${args.spec.iters} iterations (spec ${text})\n`);
  let done = 0;
  const t0 = Date.now();
  const runs = await runPool(jobs, args.jobs, (j) => runChild<Job, ArenaRun>(fileURLToPath(import.meta.url), j), (r) =>
    process.stderr.write(`${r.cell} seed ${r.seed}: ${r.seconds.toFixed(0)} s${r.crash.crashed ? `, crashed: ${r.crash.why}` : ''} (${++done}/${jobs.length})\n`),
  );
  const rows = summarizeArena(cells, runs, args.spec.seeds, args.spec.iters);
  process.stderr.write(`arena: ${((Date.now() - t0) / 60000).toFixed(1)} min\n`);
  process.stdout.write((args.json ? arenaJsonLines(rows, skipped) : arenaMarkdown(rows, skipped)) + '\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch(exitWithError);
}
