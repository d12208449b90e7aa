/**
 * The Arena's worker pool with a stand-in trainer client (no Worker in Node): a worker that dies on
 * its last run leaves its slot empty, and the end of the arena still ends every worker and returns
 * to idle, with the dead run named on its cell.
 */
import { describe, expect, it, vi } from 'vitest';
import { SCALAR_METRICS, type MetricRow } from '../../workers/core/metrics';

const made: Array<{ killed: boolean }> = [];

function row(iter: number): MetricRow {
  const r = Object.fromEntries(SCALAR_METRICS.map((k) => [k, 0])) as Record<string, number>;
  Object.assign(r, { iter, success_rate: 0.5, rollouts: 16, ms: 10, entropy: 1 });
  return { ...(r as Record<(typeof SCALAR_METRICS)[number], number>), adv_hist: [], adv_hist_edges: [], ratio_hist: [], ratio_hist_edges: [] };
}

vi.mock('../../app/trainerClient', () => ({
  metricsCallback: <T>(fn: T) => fn,
  eventsCallback: <T>(fn: T) => fn,
  progressCallback: <T>(fn: T) => fn,
  spawnTrainer(onError: (message: string) => void) {
    const index = made.length;
    const client = {
      killed: false,
      kill() {
        client.killed = true;
      },
      terminate() {
        client.killed = true;
      },
      trainer: {
        ping: async () => 0,
        configure: async () => {},
        subscribe: async () => {},
        debug: async () => {},
        // The first worker dies during its run (its call never answers); the others train.
        start: (onRows: (rows: MetricRow[]) => void, iters: number) =>
          index === 0
            ? new Promise<void>(() => setTimeout(() => onError('the worker was killed'), 0))
            : Promise.resolve().then(() => onRows(Array.from({ length: iters }, (_, i) => row(i + 1)))),
      },
    };
    made.push(client);
    return client;
  },
}));

describe('the Arena pool', () => {
  it('a worker that dies on its last run: every worker ends, the arena goes idle, the run is named', async () => {
    const { useArenaStore } = await import('../../app/arena/arenaStore');
    const { parseArenaSpec } = await import('../../workers/content/arena/dimensions');
    // Two cells, one seed, two workers: each slot trains one run, so slot 0 is not refilled.
    useArenaStore.setState({ workers: 2 });
    useArenaStore.getState().setSpec(parseArenaSpec('task=search;iters=5;seeds=1;clip=token,cispo;filter=none;advantage=trajectory;aggregation=seq-mean-token-mean;set.batch=4;set.group=4'));
    useArenaStore.getState().run();
    await vi.waitFor(() => expect(useArenaStore.getState().phase).toBe('idle'));
    expect(made).toHaveLength(2);
    expect(made.every((c) => c.killed)).toBe(true);
    const [dead, trained] = useArenaStore.getState().cells.map((c) => useArenaStore.getState().summaries[c.id]!);
    expect(dead!.errors).toEqual([expect.stringMatching(/^seed 1: the trainer crashed: the worker was killed/)]);
    expect(trained!.errors).toEqual([]);
    // Both runs are over, the dead one with its error.
    expect(useArenaStore.getState().progress.runsDone).toBe(2);
  });
});
