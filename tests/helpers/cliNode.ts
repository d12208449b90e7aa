/**
 * How the tests start a CLI: Node with tsx's loader, as `tsx` itself would, without `npx` or
 * `npm run` in front and without tsx's second process. Each of those costs about a second of
 * start-up, and the CLI tests start a few hundred processes.
 */
import { spawnSync, type SpawnSyncOptionsWithStringEncoding } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Node's arguments before a CLI's file: tsx's loader and the `?raw` import hook, by absolute path (a test may run from any folder). */
export const CLI_NODE_ARGS: readonly string[] = [
  '--import',
  pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href,
  '--import',
  pathToFileURL(join(ROOT, 'cli/registerRaw.mjs')).href,
];

/** Runs `cli/<file>` (or any path under the repository) with `args`, synchronously. */
export function runCli(file: string, args: readonly string[], opts: Partial<SpawnSyncOptionsWithStringEncoding> = {}) {
  return spawnSync(process.execPath, [...CLI_NODE_ARGS, join(ROOT, file), ...args], { encoding: 'utf8', cwd: ROOT, ...opts });
}
