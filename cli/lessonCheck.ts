/**
 * Every lesson's claims on the mean over seeds, headless (CPU backend): the lesson's own seeds and,
 * as a held-out check, 4 seeds drawn from outside them (workers/content/lessons.ts heldOutSeeds). Prints
 * each claim's two sides and its slack (how far past its margin it holds), so margins can be set
 * on the lesson seeds and then checked, untouched, on the others (docs/LESSONS.md).
 *
 *   npm run -s lessons:check                          (every lesson, both seed sets)
 *   npm run -s lessons:check -- --only collapse --jobs 2 --save /tmp/collapse.json
 *   npm run -s lessons:check -- --only collapse --seeds lesson    (set margins on these first)
 *   npm run -s lessons:check -- --only collapse --seeds held-out  (then check them, once)
 *   npm run -s lessons:check -- --only collapse --seeds fresh     (8 seeds never run, 2 blocks)
 *   npm run -s lessons:check -- --only collapse --load /tmp/collapse.json  (claims changed, runs not)
 *
 * Each (lesson, run, seed) trains in its own child process at nice 10 (cli/sweepPool.ts).
 */
import { flagsOf, UsageError } from './args';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { checkClaimOnSeeds, heldOutSeeds, lessonById, lessonSeeds, LESSONS, type Lesson, type RunResult, type SeedResults } from '../workers/content/lessons';
import { trainLessonRun } from '../workers/content/lessonRunner';
import { checkOutFile, readInputFile } from './paths';
import { exitWithError } from './printable';
import { runChild, runPool } from './sweepPool';

/** Largest --load file read: every lesson's runs on both seed sets, rows and last batches, are tens of megabytes. */
const MAX_LOAD_BYTES = 256 * 1024 * 1024;

interface Job {
  lesson: string;
  run: string;
  seed: number;
}

type JobResult = Job & { result: RunResult; seconds: number };

const SEED_SETS = ['lesson', 'held-out', 'both', 'fresh'] as const;
type SeedSet = (typeof SEED_SETS)[number];

/**
 * The seed sets `--seeds` names, each a list of 4-seed blocks (a claim holds on a block's mean).
 * `fresh`: the next 8 seeds of the held-out draw, two blocks, for a regime whose held-out seeds have
 * already been seen (docs/LESSONS.md, "How the margins are set").
 */
export function seedBlocks(l: Lesson, set: SeedSet): Array<[string, readonly number[]]> {
  const lesson: [string, readonly number[]] = ['lesson', lessonSeeds(l)];
  const held: [string, readonly number[]] = ['held-out', heldOutSeeds(l)];
  if (set === 'lesson') return [lesson];
  if (set === 'held-out') return [held];
  if (set === 'both') return [lesson, held];
  const more = heldOutSeeds(l, 12).slice(4);
  return [
    ['fresh', more.slice(0, 4)],
    ['fresh', more.slice(4)],
  ];
}

export function parse(argv: string[]): { only: string[] | null; jobs: number; job: string | null; save: string | null; load: string | null; seeds: SeedSet } {
  const a = { only: null as string[] | null, jobs: 2, job: null as string | null, save: null as string | null, load: null as string | null, seeds: 'both' as SeedSet };
  for (const { arg, flag, value: v } of flagsOf(argv)) {
    switch (flag) {
      case '--only':
        a.only = v().split(',');
        for (const id of a.only) if (!lessonById(id)) throw new UsageError(`--only: unknown lesson "${id.slice(0, 40)}"; expected some of ${LESSONS.map((l) => l.id).join(', ')}`);
        break;
      case '--jobs': {
        const x = v();
        if (!/^\d{1,2}$/.test(x) || Number(x) < 1 || Number(x) > 64) throw new UsageError(`--jobs ${x}: expected a whole number in 1..64`);
        a.jobs = Number(x);
        break;
      }
      case '--job':
        a.job = v();
        break;
      case '--save':
        a.save = v();
        break;
      case '--load':
        a.load = v();
        break;
      case '--seeds': {
        const set = v();
        if (!(SEED_SETS as readonly string[]).includes(set)) throw new UsageError(`--seeds: expected one of ${SEED_SETS.join(', ')}, got "${set.slice(0, 40)}"`);
        a.seeds = set as SeedSet;
        break;
      }
      default:
        throw new UsageError(`${arg}: unknown flag; expected --only id,id, --seeds lesson|held-out|both|fresh, --jobs N, --save results.json or --load results.json`);
    }
  }
  // Checked before the runs: they take minutes, and their results must not be lost to a path that cannot be written.
  if (a.save !== null && a.job === null) checkOutFile('--save', a.save);
  return a;
}

const fmt = (x: number) => (Number.isFinite(x) ? (Math.abs(x) >= 10 ? x.toFixed(1) : x.toPrecision(3)) : String(x));

/** How far past its margin a claim holds, in the claim's own units (negative: it fails). */
export function slack(op: '>' | '<', a: number, b: number, by = 0, times?: number): number {
  if (times !== undefined) return op === '>' ? a - b * times : b / times - a;
  return op === '>' ? a - (b + by) : b - by - a;
}

export function report(lesson: Lesson, seeds: readonly number[], label: string, results: JobResult[]): { lines: string[]; failed: number } {
  const bySeed: SeedResults[] = seeds.map((seed) => Object.fromEntries(results.filter((r) => r.lesson === lesson.id && r.seed === seed).map((r) => [r.run, r.result])));
  const lines = [`${lesson.id}, ${label} seeds ${seeds.join(', ')}:`];
  let failed = 0;
  for (const c of lesson.claims) {
    const k = checkClaimOnSeeds(lesson, c, bySeed);
    if (!k.ok) failed++;
    const per = k.perSeed.map((p) => fmt(p.a)).join(' ');
    lines.push(`  ${k.ok ? 'ok  ' : 'FAIL'} ${c.id}: a=${fmt(k.a)} b=${fmt(k.b)} slack=${fmt(slack(c.op, k.a, k.b, c.by, c.times))}  (a per seed: ${per})`);
  }
  return { lines, failed };
}

/** The saved runs of `jobs`, from a `--save` file; names every job the file lacks. */
function loadResults(path: string, jobs: Job[]): JobResult[] {
  const text = readInputFile('--load', path, MAX_LOAD_BYTES);
  let saved: JobResult[];
  try {
    saved = JSON.parse(text) as JobResult[];
  } catch (e) {
    throw new UsageError(`--load ${path}: not a file this command saved (${(e as Error).message}); write one with --save`);
  }
  if (!Array.isArray(saved)) throw new UsageError(`--load ${path}: expected the list of runs --save writes, found ${typeof saved}`);
  const key = (j: Job) => `${j.lesson}/${j.run}/${j.seed}`;
  const byKey = new Map(saved.map((r) => [key(r), r]));
  const missing = jobs.filter((j) => !byKey.has(key(j)));
  if (missing.length) throw new UsageError(`--load ${path}: no saved run for ${missing.slice(0, 5).map(key).join(', ')}${missing.length > 5 ? ` and ${missing.length - 5} more` : ''}; train them (drop --load) or pick the seeds that were saved (--seeds)`);
  return jobs.map((j) => byKey.get(key(j))!);
}

async function main(): Promise<void> {
  const args = parse(process.argv.slice(2));
  if (args.job) {
    const j = JSON.parse(args.job) as Job;
    const r = await trainLessonRun(lessonById(j.lesson)!, j.run, j.seed);
    process.stdout.write(JSON.stringify({ ...j, result: { rows: r.rows, dump: r.dump }, seconds: r.seconds }) + '\n');
    return;
  }
  const lessons = LESSONS.filter((l) => !args.only || args.only.includes(l.id));
  // Only the lesson seeds while margins are being set, so the held-out runs are not seen before they test them.
  const seedSets = (l: Lesson) => seedBlocks(l, args.seeds);
  const jobs: Job[] = lessons.flatMap((l) => seedSets(l).flatMap(([, seeds]) => seeds.flatMap((seed) => l.runs.map((r) => ({ lesson: l.id, run: r.id, seed })))));
  const t0 = Date.now();
  let done = 0;
  const results = args.load
    ? loadResults(args.load, jobs)
    : await runPool(jobs, args.jobs, (j) => runChild<Job, JobResult>(fileURLToPath(import.meta.url), j), (r) => {
        done++;
        if (done % 10 === 0 || done === jobs.length) process.stderr.write(`${done}/${jobs.length} runs, ${((Date.now() - t0) / 1000).toFixed(0)} s\n`);
      });
  // Every run's rows and last batch, to try a changed claim without training again.
  if (args.save && !args.load) writeFileSync(args.save, JSON.stringify(results));
  let failed = 0;
  for (const l of lessons) {
    for (const [label, seeds] of seedSets(l)) {
      const r = report(l, seeds, label, results);
      failed += r.failed;
      process.stdout.write(r.lines.join('\n') + '\n');
    }
  }
  process.stdout.write(`${failed} claim checks failed; ${((Date.now() - t0) / 60000).toFixed(1)} min\n`);
  if (failed) process.exitCode = 1;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch(exitWithError);
}
