/** The task registry: one file per toy task (docs/TASKS.md has the table of what each one shows). */
import type { RunConfig } from '../config';
import { createRolesEnv } from './roles';
import { createSearchEnv } from './search';
import { createSequenceEnv } from './sequence';
import { createToolsEnv } from './tools';
import type { TaskEnv } from './types';

export function createEnv(cfg: RunConfig): TaskEnv {
  switch (cfg.task) {
    case 'search':
      return createSearchEnv(cfg.env);
    case 'tools':
      return createToolsEnv(cfg.env);
    case 'roles':
      return createRolesEnv(cfg.env);
    case 'sequence':
      return createSequenceEnv({ ...cfg.env, seed: cfg.seed });
  }
}

export { TASK_KNOBS } from './knobs';
export * from './types';
