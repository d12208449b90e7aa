// Bundles bench/dawn.ts (the benchmark through Dawn in Node) into one ES module for a GPU machine
// that has no npm, no browser and no network: `node bench/gpuMachine/bundle.mjs OUT.mjs`. WGSL
// `?raw` imports become strings; `webgpu` stays external (the run script points --webgpu at an
// unpacked copy of the package). See bench/gpuMachine/run.sh for what travels with it.
// `npm run bench:dawn` runs such a bundle too: TF.js's ES build imports directories, which Node's
// loader refuses, and esbuild resolves.
import { build } from 'esbuild';
import { readFile } from 'node:fs/promises';
import { resolve, dirname } from 'node:path';
const raw = {
  name: 'raw',
  setup(b) {
    b.onResolve({ filter: /\?raw$/ }, (a) => ({ path: resolve(dirname(a.importer), a.path.replace(/\?raw$/, '')), namespace: 'raw' }));
    b.onLoad({ filter: /.*/, namespace: 'raw' }, async (a) => ({ contents: await readFile(a.path, 'utf8'), loader: 'text' }));
  },
};
await build({
  entryPoints: ['bench/dawn.ts'],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outfile: process.argv[2] ?? '.scratch/dawnbench/bench.mjs',
  external: ['webgpu'],
  plugins: [raw],
  logLevel: 'warning',
  banner: { js: "import { createRequire as __cr } from 'node:module'; import { fileURLToPath as __fu } from 'node:url'; import { dirname as __dn } from 'node:path'; const require = __cr(import.meta.url); const __filename = __fu(import.meta.url); const __dirname = __dn(__filename);" },
});
