/**
 * Soak test: trains many iterations in headless Chromium (GPU backend by default) and prints the
 * JS heap and the live GPU buffers at intervals; both must stay flat. A long run, not part of
 * `npm test`:
 *   npm run soak -- [--iters 10000] [--every 500] [--backend gpu|cpu] [--set k=v,k=v]
 * Exits 1 if the live buffers grow or the heap grows by more than 50% from the first sample after
 * warm-up to the last.
 */
import { chromium } from 'playwright';
import { createServer } from 'vite';
import { CHROMIUM_PATH, WEBGPU_ARGS } from '../tests/helpers/chromium';
import { flagsOrExit } from './lib/flags';
import type { SoakSample } from './soak/main';

const flags = flagsOrExit(
  {
    iters: { kind: 'count', fallback: '10000' },
    every: { kind: 'count', fallback: '500' },
    backend: { kind: 'text', fallback: 'gpu', oneOf: ['gpu', 'cpu'] },
    set: { kind: 'text', fallback: 'batch=2,group=4,model.hidden=16' },
  },
  'npm run soak -- [--iters 10000] [--every 500] [--backend gpu|cpu] [--set k=v,k=v]',
);

async function main(): Promise<void> {
  const { iters, every, backend, set } = flags;
  // No file watching and no HMR: an edit elsewhere in the tree must not reload the page mid-soak.
  const server = await createServer({ root: process.cwd(), logLevel: 'error', server: { port: 5179, strictPort: false, hmr: false, watch: null } });
  await server.listen();
  const url = server.resolvedUrls!.local[0]!;
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [...WEBGPU_ARGS, '--enable-precise-memory-info', '--js-flags=--expose-gc'],
  });
  const page = await browser.newPage();
  const samples: SoakSample[] = [];
  let finish!: (r: { ok: boolean; message: string }) => void;
  const done = new Promise<{ ok: boolean; message: string }>((r) => (finish = r));
  await page.exposeFunction('__soakReport', (s: SoakSample) => {
    samples.push(s);
    console.log(`iter ${String(s.iter).padStart(6)}  heap ${s.heapMB.toFixed(2).padStart(7)} MB  live GPU buffers ${String(s.liveBuffers).padStart(4)}  ${s.seconds.toFixed(0)} s`);
  });
  await page.exposeFunction('__soakDone', (r: { ok: boolean; message: string }) => finish(r));
  console.log(`soak: ${iters} iterations, backend ${backend}, config ${set}`);
  await page.goto(`${url}bench/soak/index.html?iters=${iters}&every=${every}&backend=${backend}&set=${encodeURIComponent(set)}`);
  const result = await done;
  await browser.close();
  await server.close();
  if (!result.ok) {
    console.error(result.message);
    process.exit(1);
  }
  const warm = samples[Math.min(1, samples.length - 1)]!;
  const last = samples[samples.length - 1]!;
  const bufferGrowth = last.liveBuffers - warm.liveBuffers;
  const heapGrowth = (last.heapMB - warm.heapMB) / warm.heapMB;
  console.log(`live GPU buffers: ${warm.liveBuffers} -> ${last.liveBuffers}; heap ${warm.heapMB.toFixed(2)} -> ${last.heapMB.toFixed(2)} MB (${(100 * heapGrowth).toFixed(1)}%)`);
  if (bufferGrowth > 0 || heapGrowth > 0.5) {
    console.error('soak: growth beyond noise');
    process.exit(1);
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
