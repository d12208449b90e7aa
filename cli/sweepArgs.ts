/** The flags both sweeps take (cli/sweepTasks.ts, cli/sweepMethods.ts). */
import { flagsOf } from './args';
import { INTERVALS, type IntervalKind } from './pairedStats';

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

export function parseSweepArgs(argv: string[], defaults: { seeds: number[]; out: string }, help: string): SweepArgs {
  const a: SweepArgs = { seeds: defaults.seeds, jobs: 2, out: defaults.out, scale: 1, only: null, interval: 't', job: null };
  for (const { arg, flag, value: v } of flagsOf(argv)) {
    switch (flag) {
      case '--seeds':
        a.seeds = parseSeeds(v());
        break;
      case '--interval': {
        const x = v();
        if (!(INTERVALS as readonly string[]).includes(x)) throw new Error(`--interval: expected one of ${INTERVALS.join(', ')}, got "${x}"`);
        a.interval = x as IntervalKind;
        break;
      }
      case '--jobs':
        a.jobs = Math.max(1, Number(v()));
        break;
      case '--out':
        a.out = v();
        break;
      case '--scale':
        a.scale = Number(v());
        break;
      case '--only':
        a.only = v().split(',');
        break;
      case '--job':
        a.job = v();
        break;
      case '--help':
      case '-h':
        process.stdout.write(help);
        process.exit(0);
        break;
      default:
        throw new Error(`unknown flag ${arg}`);
    }
  }
  return a;
}

/** `1,2,5-8` -> [1, 2, 5, 6, 7, 8]; anything else is an error naming the flag. */
export function parseSeeds(text: string): number[] {
  const out: number[] = [];
  for (const part of text.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) throw new Error(`--seeds: expected seeds and ranges like 1,2,5-8, got "${part}"`);
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (hi < lo || hi - lo > 10_000) throw new Error(`--seeds: bad range "${part}"`);
    for (let x = lo; x <= hi; x++) out.push(x);
  }
  if (new Set(out).size !== out.length) throw new Error(`--seeds: a seed is listed twice in "${text}"`);
  return out;
}
