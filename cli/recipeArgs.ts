/**
 * Command-line parsing for `npm run -s recipe`. A bad flag or value throws UsageError with one line
 * naming it; the CLI prints it and exits with status 2.
 */
import { MAX_RECIPE_EPISODES } from '../workers/formats/recipe';
import { flagsOf, UsageError } from './args';

export interface RecipeCliOptions {
  /** Arguments for the run config, as `npm run train` reads them (--url, --config, --set, --seed). */
  configArgs: string[];
  out: string | null;
  episodes: number | null;
  help: boolean;
}

export function parseRecipeArgs(argv: string[]): RecipeCliOptions {
  const o: RecipeCliOptions = { configArgs: [], out: null, episodes: null, help: false };
  for (const { arg, flag, value } of flagsOf(argv)) {
    switch (flag) {
      case '--help':
      case '-h':
        o.help = true;
        break;
      case '--url':
      case '--config':
      case '--set':
      case '--seed':
        o.configArgs.push(flag, value());
        break;
      case '--out':
        o.out = value();
        break;
      case '--episodes': {
        const v = value();
        const n = Number(v);
        if (!/^\d+$/.test(v) || n < 1 || n > MAX_RECIPE_EPISODES) throw new UsageError(`--episodes ${v}: expected an integer from 1 to ${MAX_RECIPE_EPISODES}`);
        o.episodes = n;
        break;
      }
      default:
        throw new UsageError(`${arg}: unknown flag; expected --url, --config, --set, --seed, --out, --episodes or --help`);
    }
  }
  if (!o.help && o.out === null) throw new UsageError('--out: missing; give the folder to write the recipe to');
  return o;
}

export function recipeHelp(): string {
  return [
    'Usage: npm run -s recipe -- (--url LINK | --config FILE.json) --out DIR [--episodes N] [--set key=value ...] [--seed S]',
    '',
    "Writes the run's experiment as a folder that runs it on verl and TRL: the episodes as JSONL, the task in",
    'Python (standard library), verl interaction + reward function + run.sh, a TRL GRPO script, and a README.',
    '  --url LINK     the playground\'s share link (or its #hash); every key must be valid',
    '  --config FILE  a run config as JSON (as for npm run train)',
    '  --out DIR      the folder to write (created; must be empty if it exists)',
    `  --episodes N   episodes in data/train.jsonl (default: 200 steps of the run's batch; at most ${MAX_RECIPE_EPISODES})`,
  ].join('\n');
}
