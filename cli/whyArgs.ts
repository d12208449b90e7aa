/** The flags of `npm run -s why` (cli/why.ts). */
import { isMethodId, methodDef, METHOD_IDS } from '../workers/core/methods';
import { whyCorrectionIds, whyHeldOut, whyIds, whyOf } from '../workers/content/why';
import { flagsOf, UsageError } from './args';
import { checkCacheFolder } from './paths';
import { parseSeeds } from './sweepArgs';

export interface WhyArgs {
  method: string;
  seeds: number[];
  jobs: number;
  json: boolean;
  /** Iterations per run instead of the regime's budget (a quick look; windows keep their share). */
  iters: number | null;
  /** A directory where each run's rows are kept and read back (runs the regimes share train once); null: none. */
  cache: string | null;
  /** Internal: one (run, seed) in a child process. */
  job: string | null;
  help: boolean;
}

export const WHY_HELP =
  'npm run -s why -- --method ID [--seeds 1-8|LIST|held-out] [--jobs 2] [--json] [--iters N] [--cache DIR]\n' +
  '  Trains the paper\'s baseline healthy and diseased and the method in the diseased regime on each seed\n' +
  '  (workers/content/why.ts) and prints the disease row (diseased vs healthy baseline) and the cure row\n' +
  '  (method vs diseased baseline), paired by seed with 95 % intervals, and each row\'s verdict under its\n' +
  '  committed margin. --seeds: seeds and ranges (default 1-8), or held-out (the seeds of the method\'s round,\n' +
  '  drawn after its regime was committed). --jobs: runs in parallel, each a child\n' +
  '  process at nice 10. --json: one JSON object. --iters: a shorter run (its windows keep their share).\n' +
  '  --cache DIR: keep each run\'s rows there and read them back (regimes that share a run train it once).\n' +
  `  Methods: ${METHOD_IDS.filter((id) => whyOf(id)).join(', ')}.\n`;

export function parseWhyArgs(argv: readonly string[]): WhyArgs {
  const a: WhyArgs = { method: '', seeds: [1, 2, 3, 4, 5, 6, 7, 8], jobs: 2, json: false, iters: null, cache: null, job: null, help: false };
  const whole = (flag: string, text: string, lo: number, hi: number): number => {
    const x = Number(text);
    if (!/^\d+$/.test(text.trim()) || !Number.isInteger(x) || x < lo || x > hi) throw new UsageError(`${flag} ${text}: expected a whole number in ${lo}..${hi}`);
    return x;
  };
  // `--seeds held-out`: the method's round's held-out seeds, known once --method is read.
  let heldOut = false;
  for (const { arg, flag, value } of flagsOf(argv)) {
    switch (flag) {
      case '--method': {
        const expected = `expected one of ${whyIds().join(', ')}, or a rollout correction: ${whyCorrectionIds().join(', ')}`;
        const id = value();
        if (!whyOf(id)) {
          throw new UsageError(
            isMethodId(id) ? `--method ${id}: ${methodDef(id).name} is a baseline, not a paper method with a disease regime; ${expected}` : `--method ${id}: unknown method; ${expected}`,
          );
        }
        a.method = id;
        break;
      }
      case '--seeds':
        heldOut = false;
        try {
          const text = value();
          if (text === 'held-out') {
            heldOut = true;
            break;
          }
          a.seeds = parseSeeds(text);
        } catch (e) {
          throw new UsageError((e as Error).message);
        }
        if (a.seeds.length === 0) throw new UsageError('--seeds: expected at least one seed');
        if (a.seeds.some((s) => s > 2 ** 31 - 1)) throw new UsageError(`--seeds: a seed is above ${2 ** 31 - 1}`);
        break;
      case '--jobs':
        a.jobs = whole('--jobs', value(), 1, 64);
        break;
      case '--iters':
        a.iters = whole('--iters', value(), 1, 100_000);
        break;
      case '--json':
        a.json = true;
        break;
      case '--cache':
        a.cache = value();
        break;
      case '--job':
        a.job = value();
        break;
      case '--help':
      case '-h':
        a.help = true;
        break;
      default:
        throw new UsageError(`${arg}: unknown flag (flags: --method ID --seeds 1-8 --jobs N --json --iters N --cache DIR)`);
    }
  }
  if (!a.help && !a.job && !a.method) throw new UsageError(`--method: expected one of ${whyIds().join(', ')}`);
  if (heldOut && a.method) a.seeds = [...whyHeldOut(whyOf(a.method)!)];
  // Checked before anything trains: a run's rows are written there as it finishes.
  if (a.cache !== null && !a.job && !a.help) a.cache = checkCacheFolder('--cache', a.cache);
  return a;
}
