/** The flags both sweeps take (cli/sweepTasks.ts, cli/sweepMethods.ts). */

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
  /** Internal: the JSON of one job, run in a child process. */
  job: string | null;
}

export function parseSweepArgs(argv: string[], defaults: { seeds: number[]; out: string }, help: string): SweepArgs {
  const a: SweepArgs = { seeds: defaults.seeds, jobs: 2, out: defaults.out, scale: 1, only: null, job: null };
  for (let i = 0; i < argv.length; i++) {
    const v = () => {
      const x = argv[++i];
      if (x === undefined) throw new Error(`${argv[i - 1]}: expected a value`);
      return x;
    };
    switch (argv[i]) {
      case '--seeds':
        a.seeds = v().split(',').map(Number);
        break;
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
        throw new Error(`unknown flag ${argv[i]}`);
    }
  }
  return a;
}
