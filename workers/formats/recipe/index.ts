/**
 * "Download recipe": the current experiment as a folder that runs it on verl and TRL. Pure
 * TypeScript (no DOM, no Node): the page zips the files, the CLI writes them out.
 *
 *   README.md             what a run needs and how the toy's numbers map
 *   config.json           the task, seed, batch, group and env.* knobs (read by the Python)
 *   data/train.jsonl      the episodes, one per line, as the playground's batches draw them
 *   make_data.py          the same rows from config.json, any count (standard library)
 *   toyenv/               the tasks in Python (standard library): same episodes, observations, rewards
 *   verl_run/             interaction, reward function, Parquet step, run.sh
 *   trl_run/train_grpo.py GRPOTrainer with the toy as its environment
 */
import type { RunConfig } from '../../core/config';
import { resolvePlan } from '../../core/plan';
import { exportToTrl, exportToVerl } from '../frameworkExport';
import { recipePlan, trlSettings, verlSettings } from './hyper';
import { defaultEpisodes, MAX_RECIPE_EPISODES } from './limits';
import { PYTHON_FILES, TRL_MARKER, TRL_RUNS_MARKER, TRL_TEMPLATE } from './pythonSources';
import { recipeReadme } from './readme';
import { recipeRows } from './rows';
import { trlConfigBlock, trlRunsBlock, verlRunScript } from './scripts';
import { whatRuns } from './whatRuns';

export interface RecipeFile {
  path: string;
  text: string;
  /** Runnable (run.sh). */
  executable?: boolean;
}

export interface Recipe {
  /** Folder name: `recipe-<task>-seed<seed>`. */
  name: string;
  files: RecipeFile[];
  /** What each script runs, as its header says it (workers/formats/recipe/whatRuns.ts). */
  runs: { verl: string[]; trl: string[] };
}

export interface RecipeOptions {
  /** Episodes (task instances) in data/train.jsonl. */
  episodes: number;
}

export { defaultEpisodes, MAX_RECIPE_EPISODES };

/**
 * The config with the environment the playground trains on: the resolved plan's, where the active
 * methods have set task knobs (CM2's checklist reward, ZeroSearch's noise curriculum).
 */
export function trainedConfig(cfg: RunConfig): RunConfig {
  return { ...cfg, env: resolvePlan(cfg).envConfig.env };
}

/** The config the Python reads: only what the task needs, with the environment the playground trains on. */
export function pythonConfig(cfg: RunConfig): { task: string; seed: number; batch: number; group: number; env: RunConfig['env'] } {
  return { task: cfg.task, seed: cfg.seed, batch: cfg.batch, group: cfg.group, env: trainedConfig(cfg).env };
}

export function buildRecipe(config: RunConfig, opts: RecipeOptions): Recipe {
  const { episodes } = opts;
  if (!Number.isInteger(episodes) || episodes < 1 || episodes > MAX_RECIPE_EPISODES) {
    throw new Error(`episodes ${episodes}: expected an integer from 1 to ${MAX_RECIPE_EPISODES} (make_data.py writes more on the cluster)`);
  }
  // Every part of the recipe reads the trained environment; the methods are the config's own.
  const cfg = trainedConfig(config);
  const plan = recipePlan(cfg, episodes);
  const verl = verlSettings(cfg, plan);
  const trl = trlSettings(cfg, plan);
  for (const marker of [TRL_MARKER, TRL_RUNS_MARKER]) if (!TRL_TEMPLATE.includes(marker)) throw new Error(`trl_run/train_grpo.py: the marker ${marker} is missing`);
  const rows = recipeRows(cfg, episodes);
  // What runs is said from the config as the user set it (the methods that set task knobs show there).
  const verlExport = exportToVerl(config);
  const trlExport = exportToTrl(config);
  const runs = { verl: whatRuns(config, verlExport), trl: whatRuns(config, trlExport) };
  const files: RecipeFile[] = [
    { path: 'README.md', text: recipeReadme(cfg, plan, { episodes, verl, trl, verlExport, trlExport, runs }) },
    { path: 'config.json', text: JSON.stringify(pythonConfig(cfg), null, 2) + '\n' },
    { path: 'data/train.jsonl', text: rows.map((r) => JSON.stringify(r)).join('\n') + '\n' },
    ...Object.entries(PYTHON_FILES).map(([path, text]) => ({ path, text })),
    { path: 'verl_run/run.sh', text: verlRunScript(verl, cfg.task, runs.verl), executable: true },
    { path: 'trl_run/train_grpo.py', text: TRL_TEMPLATE.replace(TRL_RUNS_MARKER, () => trlRunsBlock(cfg.task, runs.trl)).replace(TRL_MARKER, () => trlConfigBlock(trl)) },
  ];
  return { name: `recipe-${cfg.task}-seed${cfg.seed}`, files, runs };
}
