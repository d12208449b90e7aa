/**
 * How the tests start a CLI: plain Node on a bundle of the CLI's file and everything it imports
 * from the repository (packages stay imports, resolved from node_modules as before), made with
 * esbuild once per test file. The unit suite starts a few hundred CLI processes; through tsx's
 * loader each start compiled and loaded about 160 TypeScript modules, 1.5 s here, and a bundle
 * starts in about 0.2 s. `npm run` still runs the CLIs through tsx: tests/unit/cliInputs.test.ts
 * starts every package.json CLI that way once (TSX_NODE_ARGS), so the bundle is not the only path
 * tested.
 *
 * A bundle is made from the sources as they are when a test file first asks for it, so a test
 * never runs a stale one (watch mode included). The `?raw` imports (WGSL kernels, the recipes'
 * Python and YAML files) become their text, as in Vite and cli/rawLoader.mjs.
 */
import { spawnSync, type SpawnSyncOptionsWithStringEncoding } from 'node:child_process';
import { mkdirSync, renameSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildSync } from 'esbuild';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Inside the repository, so the bundles' package imports resolve from its node_modules. */
const BUNDLES = join(ROOT, 'node_modules/.cache/cli-test-bundles');

/** Node's arguments before a CLI's file when it runs through tsx's loader, as `npm run` does. */
export const TSX_NODE_ARGS: readonly string[] = [
  '--import',
  pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href,
  '--import',
  pathToFileURL(join(ROOT, 'cli/registerRaw.mjs')).href,
];

/**
 * The extensions the repository imports with `?raw`: esbuild drops the query and loads them as
 * text. One more kind of file fails the bundle with "No loader is configured", never silently.
 */
const RAW_TEXT = { '.wgsl': 'text', '.py': 'text', '.yaml': 'text' } as const;

const bundles = new Map<string, string>();

/**
 * The bundle that runs `file` (a path under the repository, absolute or from its root). Written
 * under a name of this process's and then renamed, so two test files bundling the same CLI at
 * once never run a half-written file.
 */
export function cliBundle(file: string): string {
  const abs = resolve(ROOT, file);
  const known = bundles.get(abs);
  if (known) return known;
  const out = join(BUNDLES, relative(ROOT, abs).replace(/\.ts$/, '.mjs'));
  const part = `${out}.${process.pid}.part`;
  mkdirSync(dirname(out), { recursive: true });
  buildSync({
    entryPoints: [abs],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    loader: RAW_TEXT,
    outfile: part,
    logLevel: 'error',
  });
  renameSync(part, out);
  bundles.set(abs, out);
  return out;
}

/** Node's arguments (after Node itself) that run `file` with `args`. */
export function cliArgv(file: string, args: readonly string[] = []): string[] {
  return [cliBundle(file), ...args];
}

/** Runs `cli/<file>` (or any path under the repository) with `args`, synchronously. */
export function runCli(file: string, args: readonly string[], opts: Partial<SpawnSyncOptionsWithStringEncoding> = {}) {
  return spawnSync(process.execPath, cliArgv(file, args), { encoding: 'utf8', cwd: ROOT, ...opts });
}
