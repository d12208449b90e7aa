/**
 * `npm run bench`: the benchmark orchestrator (see BENCHMARKS.md).
 *
 *   npm run bench [-- --quick] [-- --only kernels,iteration,peer,scaling,page] [-- --no-browser] [-- --out FILE]
 *   npm run bench -- --render FILE      (re-print the tables of a saved results JSON)
 *
 * Serves bench/page with Vite, opens it in headless Chromium (tests/helpers/chromium.ts; env
 * CHROMIUM_PATH picks the binary, BENCH_CHROMIUM_ARGS adds flags, e.g. for a hardware adapter),
 * runs the in-page benchmarks (real kernels and backends), runs the CPU backend in Node, prints
 * markdown tables to stdout and writes the raw results to bench/results/latest.json.
 * Progress goes to stderr. --no-browser runs only the Node part (the CPU backend).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright';
import { createServer, type ViteDevServer } from 'vite';
import { CHROMIUM_PATH, WEBGPU_ARGS } from '../tests/helpers/chromium';
import { defaultConfig } from '../workers/core/config';
import { encodeShareLink } from '../workers/content/shareLink';
import { configFor } from './lib/iteration';
import { launchShapes } from './lib/kernelCases';
import { sectionRunner } from './lib/section';
import { renderMarkdown, type BenchResults } from './lib/tables';
import type { IterationRow, PageEnv } from './lib/types';
import { nodeIterations } from './node';
import type { BenchApi } from './page/main';
import { runPageBench } from './pageRun';
import { parseBenchArgs, ROOT } from './args';
import { applyArgs, makePlan, type Plan, type Section } from './plan';

const log = (m: string) => process.stderr.write(`${m}\n`);

/** The page section's configs as share links; the defaults open the bare address, as a first visit does. */
function pageConfigs(plan: Plan): Array<{ name: string; hash: string }> {
  const bare = encodeShareLink(defaultConfig());
  return plan.page.scales.map((name) => {
    const spec = plan.iteration.scales.find((s) => s.name === name);
    if (!spec) throw new Error(`page: no iteration scale "${name}"`);
    const hash = encodeShareLink(configFor(spec.set));
    return { name, hash: hash === bare ? '' : hash };
  });
}

/**
 * The Chromium flags: tests/helpers/chromium.ts WEBGPU_ARGS, developer features (timestamp queries
 * at full resolution; Chrome rounds them to 100 us otherwise), then BENCH_CHROMIUM_ARGS. Chromium
 * keeps only the last --enable-features / --disable-features, so those lists are merged.
 */
export function chromiumArgs(extraText = process.env.BENCH_CHROMIUM_ARGS ?? ''): string[] {
  const all = [...WEBGPU_ARGS, '--enable-webgpu-developer-features', ...extraText.split(/\s+/).filter(Boolean)];
  const lists = new Map<string, string[]>();
  const out: string[] = [];
  for (const a of all) {
    const m = /^(--(?:enable|disable)-features)=(.*)$/.exec(a);
    if (!m) {
      if (!out.includes(a)) out.push(a);
      continue;
    }
    if (!lists.has(m[1]!)) {
      lists.set(m[1]!, []);
      out.push(m[1]!);
    }
    for (const f of m[2]!.split(',').filter(Boolean)) if (!lists.get(m[1]!)!.includes(f)) lists.get(m[1]!)!.push(f);
  }
  return out.map((a) => (lists.has(a) ? `${a}=${lists.get(a)!.join(',')}` : a));
}

async function openBenchPage(browser: Browser): Promise<{ page: Page; server: ViteDevServer }> {
  const server = await createServer({
    root: ROOT,
    configFile: false,
    logLevel: 'warn',
    clearScreen: false,
    cacheDir: resolve(ROOT, 'node_modules/.vite-bench'),
    server: {
      host: '127.0.0.1',
      port: 0,
      strictPort: false,
      hmr: false,
      watch: null,
      // Cross-origin isolation: performance.now() at 5 us instead of 100 us, and SharedArrayBuffer.
      headers: { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' },
    },
    optimizeDeps: {
      entries: ['bench/page/index.html'],
      include: [
        'zod',
        '@tensorflow/tfjs-core',
        '@tensorflow/tfjs-core/dist/register_all_gradients',
        '@tensorflow/tfjs-backend-cpu',
        '@tensorflow/tfjs-backend-wasm',
        '@tensorflow/tfjs-backend-webgpu',
      ],
    },
  });
  await server.listen();
  const base = server.resolvedUrls?.local[0];
  if (!base) throw new Error('vite gave no URL');
  const page = await browser.newPage();
  page.on('console', (m) => {
    const t = m.text();
    if (t.startsWith('[bench]')) log(t.slice(8));
    else if (m.type() === 'error') log(`page error: ${t}`);
  });
  page.on('pageerror', (e) => log(`page exception: ${e.message}`));
  await page.goto(`${base}bench/page/index.html`);
  await page.waitForFunction(() => window.__bench?.ready === true, undefined, { timeout: 120_000 });
  return { page, server };
}

/** Calls window.__bench[name](options) in the page. */
function inPage<K extends Exclude<keyof BenchApi, 'ready'>>(page: Page, name: K, arg?: Parameters<BenchApi[K]>[0]): Promise<Awaited<ReturnType<BenchApi[K]>>> {
  return page.evaluate(
    ([n, a]) => (window.__bench[n as K] as (x: unknown) => Promise<unknown>)(a),
    [name, arg] as const,
  ) as Promise<Awaited<ReturnType<BenchApi[K]>>>;
}

export async function main(argv: string[]): Promise<BenchResults> {
  const args = parseBenchArgs(argv);
  if (args.render) {
    const saved = JSON.parse(readFileSync(args.render, 'utf8')) as BenchResults;
    process.stdout.write(renderMarkdown(saved));
    return { ...saved, errors: {} };
  }
  let plan = applyArgs(makePlan(args.quick, true), args);
  const t0 = Date.now();
  const flags = chromiumArgs();
  const results: BenchResults = {
    meta: {
      date: new Date().toISOString(),
      command: `npm run bench${argv.length ? ` -- ${argv.join(' ')}` : ''}`,
      node: process.version,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      cpuCount: cpus().length,
      chromiumFlags: flags,
      browserVersion: null,
      sections: args.only,
      quick: args.quick,
      loadStart: loadavg(),
    },
    errors: {},
  };
  const want = (s: Section) => args.only.includes(s);
  const pageSections = (['kernels', 'iteration', 'peer', 'scaling'] as const).filter(want);
  let browser: Browser | null = null;
  let bench: { page: Page; server: ViteDevServer } | null = null;
  try {
    if (args.browser && (pageSections.length || want('page'))) {
      log(`launching ${CHROMIUM_PATH} ${flags.join(' ')}`);
      browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: flags, headless: true });
      results.meta.browserVersion = `Chromium ${browser.version()}`;
    }
    if (browser && pageSections.length) {
      bench = await openBenchPage(browser);
      results.env = (await inPage(bench.page, 'env')) as PageEnv;
      const a = results.env.adapter;
      log(`adapter: ${a.available ? `${a.vendor} ${a.architecture} ${a.description ?? ''} fallback=${a.isFallbackAdapter}` : a.error}`);
      // A hardware adapter gets the full sizes; a software one (or none) the reduced plan.
      plan = applyArgs(makePlan(args.quick, !(a.available && a.isFallbackAdapter === false)), args);
    }
    const section = sectionRunner(results, log);
    if (want('kernels')) {
      results.launch = plan.iteration.nodeScales.map((sc) => {
        return { scale: sc.name, ...launchShapes(configFor(sc.set)) };
      });
      if (bench) await section('kernels', async () => void (results.kernels = await inPage(bench!.page, 'kernels', plan.kernels)));
    }
    if (want('iteration')) {
      await section('iteration', async () => {
        const rows: IterationRow[] = [];
        if (bench) rows.push(...(await inPage(bench.page, 'iteration', { scales: plan.iteration.scales, gpuScales: plan.iteration.gpuScales, cpuScales: plan.iteration.pageCpuScales })));
        if (args.node) rows.push(...(await nodeIterations(plan.iteration.nodeScales, log)));
        const names = [...plan.iteration.nodeScales, ...plan.iteration.scales].map((s) => s.name);
        const order = (r: IterationRow) => names.indexOf(r.scale);
        results.iteration = rows.sort((a, b) => order(a) - order(b));
      });
    }
    if (want('peer') && bench) {
      const base = new URL(bench.page.url());
      const wasmPath = `${base.origin}/node_modules/@tensorflow/tfjs-backend-wasm/dist/`;
      await section('peer', async () => void (results.peer = await inPage(bench!.page, 'peer', { ...plan.peer, wasmPath })));
    }
    if (want('scaling') && bench) await section('scaling', async () => void (results.scaling = await inPage(bench!.page, 'scaling', plan.scaling)));
    if (bench) {
      await bench.page.close();
      await bench.server.close();
      bench = null;
    }
    if (want('page') && browser) {
      await section('page', async () => void (results.page = await runPageBench(browser!, { ...plan.page, configs: pageConfigs(plan), root: ROOT, log })));
    }
  } finally {
    if (bench) await bench.server.close().catch(() => {});
    await browser?.close();
  }
  results.meta.wallSeconds = (Date.now() - t0) / 1000;
  results.meta.loadEnd = loadavg();
  mkdirSync(dirname(args.out), { recursive: true });
  writeFileSync(args.out, JSON.stringify(results, null, 1));
  process.stdout.write(renderMarkdown(results));
  log(`results written to ${args.out} (${results.meta.wallSeconds.toFixed(0)} s)`);
  return results;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (r) => process.exit(Object.keys(r.errors).length ? 1 : 0),
    (e: unknown) => {
      process.stderr.write(`bench failed: ${(e as Error).stack ?? e}\n`);
      process.exit(2);
    },
  );
}
