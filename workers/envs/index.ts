/** The task registry. */
import type { RunConfig } from '../config';
import { createSearchEnv } from './search';
import type { TaskEnv } from './types';

export function createEnv(cfg: RunConfig): TaskEnv {
  switch (cfg.task) {
    case 'search':
      return createSearchEnv(cfg.env);
  }
}

export * from './types';
