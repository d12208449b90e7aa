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
import { exportToTrl, exportToVerl } from '../frameworkExport';
import { recipePlan, trlSettings, verlSettings } from './hyper';
import { defaultEpisodes, MAX_RECIPE_EPISODES } from './limits';
import { PYTHON_FILES, TRL_MARKER, TRL_TEMPLATE } from './pythonSources';
import { recipeReadme } from './readme';
import { recipeRows } from './rows';
import { trlConfigBlock, verlRunScript } from './scripts';

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
}

export interface RecipeOptions {
  /** Episodes (task instances) in data/train.jsonl. */
  episodes: number;
}

export { defaultEpisodes, MAX_RECIPE_EPISODES };

/** The config the Python reads: only what the task needs. */
export function pythonConfig(cfg: RunConfig): { task: string; seed: number; batch: number; group: number; env: RunConfig['env'] } {
  return { task: cfg.task, seed: cfg.seed, batch: cfg.batch, group: cfg.group, env: cfg.env };
}

export function buildRecipe(cfg: RunConfig, opts: RecipeOptions): Recipe {
  const { episodes } = opts;
  if (!Number.isInteger(episodes) || episodes < 1 || episodes > MAX_RECIPE_EPISODES) {
    throw new Error(`episodes ${episodes}: expected an integer from 1 to ${MAX_RECIPE_EPISODES} (make_data.py writes more on the cluster)`);
  }
  const plan = recipePlan(cfg, episodes);
  const verl = verlSettings(cfg, plan);
  const trl = trlSettings(cfg, plan);
  if (!TRL_TEMPLATE.includes(TRL_MARKER)) throw new Error(`trl_run/train_grpo.py: the marker ${TRL_MARKER} is missing`);
  const rows = recipeRows(cfg, episodes);
  const files: RecipeFile[] = [
    { path: 'README.md', text: recipeReadme(cfg, plan, { episodes, verl, trl, verlExport: exportToVerl(cfg), trlExport: exportToTrl(cfg) }) },
    { path: 'config.json', text: JSON.stringify(pythonConfig(cfg), null, 2) + '\n' },
    { path: 'data/train.jsonl', text: rows.map((r) => JSON.stringify(r)).join('\n') + '\n' },
    ...Object.entries(PYTHON_FILES).map(([path, text]) => ({ path, text })),
    { path: 'verl_run/run.sh', text: verlRunScript(verl, cfg.task), executable: true },
    { path: 'trl_run/train_grpo.py', text: TRL_TEMPLATE.replace(TRL_MARKER, trlConfigBlock(trl)) },
  ];
  return { name: `recipe-${cfg.task}-seed${cfg.seed}`, files };
}
