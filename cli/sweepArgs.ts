/**
 * The flags both sweeps take (cli/sweepTasks.ts, cli/sweepMethods.ts). A bad flag or value throws
 * a UsageError naming it, and the output file is checked (cli/paths.ts) before any run starts: a
 * sweep takes minutes to hours, and its table must not be lost to a path it could never write.
 */
import { parseSeedRanges, SeedTextError } from '../workers/core/seedRanges';
import { flagsOf, UsageError } from './args';
import { INTERVALS, type IntervalKind } from './pairedStats';
import { checkOutFile } from './paths';

/** Most seeds one sweep runs each setting on. */
export const MAX_SWEEP_SEEDS = 1000;

export interface SweepArgs {
  seeds: number[];
  /** Parallel child processes. */
  jobs: number;
  /** The markdown file whose generated section is rewritten, or - for stdout. */
  out: string;
  /** Multiplies every run's iterations. */
  scale: number;
  /** Keep only these (tasks or method ids); null: all. */
  only: string[] | null;
  /** The 95 % interval of the paired differences (cli/sweepMethods.ts). */
  interval: IntervalKind;
  /** Internal: the JSON of one job, run in a child process. */
  job: string | null;
}

/** A whole number in [lo, hi] for `flag`, or a UsageError naming it. */
function wholeNumber(flag: string, text: string, lo: number, hi: number): number {
  if (!/^\d{1,6}$/.test(text) || Number(text) < lo || Number(text) > hi) throw new UsageError(`${flag} ${text}: expected a whole number in ${lo}..${hi}`);
  return Number(text);
}

/**
 * The sweep's flags; `known` lists what --only may name (tasks or method ids). The output file is
 * checked here, before the sweep runs; `-` is stdout.
 */
export function parseSweepArgs(argv: string[], defaults: { seeds: number[]; out: string }, help: string, known: readonly string[] = []): SweepArgs {
  const a: SweepArgs = { seeds: defaults.seeds, jobs: 2, out: defaults.out, scale: 1, only: null, interval: 't', job: null };
  for (const { arg, flag, value: v } of flagsOf(argv)) {
    switch (flag) {
      case '--seeds':
        a.seeds = parseSeeds(v());
        break;
      case '--interval': {
        const x = v();
        if (!(INTERVALS as readonly string[]).includes(x)) throw new UsageError(`--interval: expected one of ${INTERVALS.join(', ')}, got "${x}"`);
        a.interval = x as IntervalKind;
        break;
      }
      case '--jobs':
        a.jobs = wholeNumber('--jobs', v(), 1, 64);
        break;
      case '--out':
        a.out = v();
        break;
      case '--scale': {
        const x = v();
        const n = Number(x);
        if (!/^\d*\.?\d+$/.test(x) || !(n > 0 && n <= 100)) throw new UsageError(`--scale ${x}: expected a number above 0, at most 100`);
        a.scale = n;
        break;
      }
      case '--only': {
        const x = v();
        a.only = x.split(',');
        const bad = a.only.filter((id) => !known.includes(id));
        if (known.length && bad.length) throw new UsageError(`--only: unknown "${bad[0]!.slice(0, 40)}"; expected some of ${known.join(', ')}`);
        break;
      }
      case '--job':
        a.job = v();
        break;
      case '--help':
      case '-h':
        process.stdout.write(help);
        process.exit(0);
        break;
      default:
        throw new UsageError(`${arg}: unknown flag; expected --seeds, --jobs, --out, --scale, --only, --interval or --help`);
    }
  }
  if (a.out !== '-' && a.job === null) checkOutFile('--out', a.out);
  return a;
}

/** `1,2,5-8` -> [1, 2, 5, 6, 7, 8], counted before it is expanded; anything else is a UsageError naming the flag. */
export function parseSeeds(text: string, max = MAX_SWEEP_SEEDS): number[] {
  try {
    return parseSeedRanges(text, max);
  } catch (e) {
    if (e instanceof SeedTextError) throw new UsageError(`--seeds: ${e.message}`);
    throw e;
  }
}
