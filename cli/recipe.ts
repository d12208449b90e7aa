/**
 * `npm run -s recipe -- --url LINK --out DIR [--episodes N]` (or `--config FILE`): writes the run's
 * experiment as a verl and TRL recipe folder (workers/recipe/). A bad flag or value exits with
 * status 2 and one line naming it.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildRecipe, defaultEpisodes, MAX_RECIPE_EPISODES } from '../workers/recipe';
import { parseArgs, UsageError } from './args';

export interface RecipeCliOptions {
  /** Arguments for the run config, as `npm run train` reads them (--url, --config, --set, --seed). */
  configArgs: string[];
  out: string | null;
  episodes: number | null;
  help: boolean;
}

export function parseRecipeArgs(argv: string[]): RecipeCliOptions {
  const o: RecipeCliOptions = { configArgs: [], out: null, episodes: null, help: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const [flag, inline] = arg.startsWith('--') && eq > 0 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new UsageError(`${flag}: expected a value after it`);
      return v;
    };
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

function main(): void {
  let opts: RecipeCliOptions;
  let config;
  try {
    opts = parseRecipeArgs(process.argv.slice(2));
    if (opts.help) {
      process.stdout.write(recipeHelp() + '\n');
      return;
    }
    config = parseArgs(opts.configArgs).config;
    if (existsSync(opts.out!) && readdirSync(opts.out!).length > 0) throw new UsageError(`--out ${opts.out}: the folder is not empty`);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`error: ${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
  const out = opts.out!;
  const recipe = buildRecipe(config, { episodes: opts.episodes ?? defaultEpisodes(config) });
  for (const f of recipe.files) {
    const path = join(out, f.path);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, f.text);
    if (f.executable) chmodSync(path, 0o755);
  }
  process.stdout.write(`${recipe.name}: ${recipe.files.length} files written to ${out}\n`);
  for (const f of recipe.files) process.stdout.write(`  ${f.path}\n`);
}

main();
