/** Dataset sizes the recipe accepts, apart from the generator so the page can read them without loading it. */
import type { RunConfig } from '../../core/config';

/** Largest dataset the recipe writes itself; make_data.py writes any count on the cluster. */
export const MAX_RECIPE_EPISODES = 200_000;

/** Episodes by default: 200 training steps of the playground's batch. */
export function defaultEpisodes(cfg: RunConfig): number {
  return 200 * cfg.batch;
}
