/**
 * `npm run -s recipe -- --url LINK --out DIR [--episodes N]` (or `--config FILE`): writes the run's
 * experiment as a verl and TRL recipe folder (workers/formats/recipe/). A bad flag, value or --out
 * folder (cli/paths.ts) exits with status 2 and one line naming it, before any file is written.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildRecipe, defaultEpisodes, MAX_RECIPE_EPISODES } from '../workers/formats/recipe';
import { parseArgs, UsageError } from './args';
import { checkOutFolder } from './paths';
import { exitWithError, printable } from './printable';
import { parseRecipeArgs, recipeHelp } from './recipeArgs';

function main(): void {
  const opts = parseRecipeArgs(process.argv.slice(2));
  if (opts.help) {
    process.stdout.write(recipeHelp() + '\n');
    return;
  }
  const config = parseArgs(opts.configArgs).config;
  const out = checkOutFolder('--out', opts.out!);
  const episodes = opts.episodes ?? defaultEpisodes(config);
  if (episodes > MAX_RECIPE_EPISODES) {
    throw new UsageError(`--episodes: this run's default is ${episodes.toLocaleString('en-US')} episodes (200 steps of its batch), more than ${MAX_RECIPE_EPISODES.toLocaleString('en-US')}; give --episodes N`);
  }
  const recipe = buildRecipe(config, { episodes });
  for (const f of recipe.files) {
    const path = join(out, f.path);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, f.text);
    if (f.executable) chmodSync(path, 0o755);
  }
  process.stdout.write(`${printable(recipe.name)}: ${recipe.files.length} files written to ${printable(opts.out!)}
`);
  for (const f of recipe.files) process.stdout.write(`  ${printable(f.path)}
`);
  // What the scripts run, as their headers say it: an estimator a framework lacks runs as GRPO there.
  for (const fw of ['verl', 'trl'] as const) for (const line of recipe.runs[fw]) process.stdout.write(`${fw === 'verl' ? 'verl' : 'TRL'}: ${printable(line)}
`);
}

try {
  main();
} catch (e) {
  exitWithError(e);
}
