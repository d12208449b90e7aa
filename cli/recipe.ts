/**
 * `npm run -s recipe -- --url LINK --out DIR [--episodes N]` (or `--config FILE`): writes the run's
 * experiment as a verl and TRL recipe folder (workers/formats/recipe/). A bad flag or value exits with
 * status 2 and one line naming it.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildRecipe, defaultEpisodes } from '../workers/formats/recipe';
import { parseArgs, UsageError } from './args';
import { parseRecipeArgs, recipeHelp, type RecipeCliOptions } from './recipeArgs';

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
  // What the scripts run, as their headers say it: an estimator a framework lacks runs as GRPO there.
  for (const fw of ['verl', 'trl'] as const) for (const line of recipe.runs[fw]) process.stdout.write(`${fw === 'verl' ? 'verl' : 'TRL'}: ${line}\n`);
}

main();
