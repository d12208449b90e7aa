/** Runs benchmark sections: each one's failure is recorded by name and the run goes on. */
import type { BenchResults } from './tables';

export function sectionRunner(results: BenchResults, log: (m: string) => void) {
  return async (name: string, fn: () => Promise<void>): Promise<void> => {
    const ts = Date.now();
    try {
      await fn();
    } catch (e) {
      results.errors[name] = (e as Error).message.split('\n')[0]!;
      log(`${name} failed: ${(e as Error).stack ?? e}`);
    }
    log(`${name}: ${((Date.now() - ts) / 1000).toFixed(1)} s`);
  };
}
