/**
 * The benchmark's GPU sections in Node through Dawn (the optional `webgpu` package), for a machine
 * with a GPU and no browser: the kernels and whole iterations on the GPU backend, and the CPU
 * backend in Node at the same scales, and the TF.js peer (its WebGPU backend on the same Dawn, its
 * WASM backend); `--only selftest,parity` checks correctness on the adapter instead: every kernel
 * against its CPU reference (the ?selftest page's cases), and the trainer on the GPU backend
 * against the CPU backend for 30 iterations on three configs. It writes the same JSON as `npm run bench` (print its tables with
 * `npm run bench -- --render FILE`); the scaling and page sections need a browser and are left out.
 *
 *   npm run -s bench:dawn -- [--quick] [--only kernels,iteration,peer,selftest,parity] [--out FILE] [--webgpu MODULE]
 *                            [--dawn FLAG ...] [--kernel-batches 128,1024,1024x64] [--kernels a,b] [--wasm DIR]
 *                            [--peer-batches 16,128] [--kernel-variant thread|subgroup]
 *
 * The npm script runs a bundle of this file (bench/gpuMachine/bundle.mjs, into node_modules/.cache):
 * TF.js's ES build has directory imports that Node's loader (and tsx's) refuse.
 *
 * --webgpu names the module to load (default `webgpu`; a path for an unpacked copy), --dawn passes
 * a flag to Dawn's create() (e.g. `backend=vulkan`; timestamp quantization is off unless
 * `--dawn enable-dawn-features=timestamp_quantization`, bench/args.ts dawnCreateFlags), --kernel-variant forces the GPU backend's kernel
 * variant (kernels/selectors.ts) in the iteration and parity sections; the kernel section times
 * both. Progress goes to stderr, tables to stdout.
 */
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { resolve } from 'node:path';
import type { KernelVariant } from '../kernels/selectors';
import { pathToFileURL } from 'node:url';
import { createCpuBackend } from '../workers/core/cpuBackend';
import { adapterEnv, iterationSection, kernelsSection } from './lib/gpuSections';
import { benchIterations, configFor } from './lib/iteration';
import { launchShapes } from './lib/kernelCases';
import { runPeerBench } from './page/peer';
import { formatReport, runSelfTest } from '../kernels/selftest';
import { createGpuBackend } from '../workers/core/gpuBackend';
import { requestGpu } from '../workers/core/gpuDevice';
import { createTrainer } from '../workers/core/trainer';
import { defaultConfig, withFieldText } from '../workers/core/config';
import { sectionRunner } from './lib/section';
import { renderMarkdown, type BenchResults } from './lib/tables';
import type { IterationRow } from './lib/types';
import { makePlan } from './plan';
import { dawnCreateFlags, parseKernelSizes } from './args';

interface DawnArgs {
  quick: boolean;
  only: string[];
  out: string;
  module: string;
  dawnFlags: string[];
  /** Prompts per kernel-bench size (rows = 8 x 9 x batch at the defaults), instead of the plan's. */
  kernelBatches?: number[];
  /** Rollouts per prompt of each size (`--kernel-batches 1024x64`; 8 where not given). */
  kernelGroups?: number[];
  /** Kernels to time (labels); all when absent. */
  kernels?: string[];
  /** Folder of tfjs-backend-wasm's .wasm files, for the peer. */
  wasmPath: string;
  /** Prompts per batch of each peer run (the plan's default scale when absent). */
  peerBatches?: number[];
  /** The GPU backend's per-row kernels in the iteration and parity sections (default: the device's choice). */
  kernelVariant?: KernelVariant;
}

/** selftest and parity check correctness on the adapter; they print their own report to stderr. */
const SECTIONS = ['kernels', 'iteration', 'peer', 'selftest', 'parity'];

function parse(argv: string[]): DawnArgs {
  const a: DawnArgs = { quick: false, only: ['kernels', 'iteration', 'peer'], out: 'bench/results/latest-dawn.json', module: 'webgpu', dawnFlags: [], wasmPath: 'node_modules/@tensorflow/tfjs-backend-wasm/dist/' };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    if (flag === '--quick') a.quick = true;
    else if (flag === '--only') a.only = value().split(',');
    else if (flag === '--out') a.out = resolve(value());
    else if (flag === '--webgpu') a.module = value();
    else if (flag === '--dawn') a.dawnFlags.push(value());
    else if (flag === '--kernel-batches') Object.assign(a, parseKernelSizes(value()));
    else if (flag === '--kernels') a.kernels = value().split(',');
    else if (flag === '--wasm') a.wasmPath = value();
    else if (flag === '--peer-batches') a.peerBatches = value().split(',').map(Number);
    else if (flag === '--kernel-variant') {
      const v = value();
      if (v !== 'thread' && v !== 'subgroup') throw new Error(`--kernel-variant: "${v}" is not thread or subgroup`);
      a.kernelVariant = v;
    }
    else throw new Error(`unknown flag ${flag}`);
  }
  for (const s of a.only) if (!SECTIONS.includes(s)) throw new Error(`--only: ${s} is not a Dawn section (${SECTIONS.join(', ')})`);
  return a;
}

const log = (m: string) => process.stderr.write(`${m}\n`);

/** A bad flag or a missing module: said in one line, without a stack trace. */
class UsageError extends Error {}

async function loadDawn(name: string, flags: string[]): Promise<GPU> {
  const spec = name.startsWith('.') || name.startsWith('/') ? pathToFileURL(resolve(name)).href : name;
  let mod: { create: (flags: string[]) => GPU; globals: Record<string, unknown> };
  try {
    mod = (await import(/* @vite-ignore */ spec)) as typeof mod;
  } catch (e) {
    if ((e as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND') throw e;
    throw new UsageError(`--webgpu ${name}: not found; install the optional \`webgpu\` package (npm i --no-save webgpu) or name an unpacked copy (--webgpu ./webgpu/index.js)`);
  }
  // Dawn's WebGPU classes (GPUBufferUsage, ...) as globals, as a browser has them.
  Object.assign(globalThis, mod.globals);
  return mod.create(dawnCreateFlags(flags));
}

const PARITY_ITERS = 30;

/**
 * The trainer on the GPU backend against the CPU backend, same config and seed, for `iters`
 * iterations on three configs: the iteration whose sampled tokens first differ (rewards are a
 * function of them) and the largest metric difference before it. On SwiftShader the GPU tests
 * require identical tokens for 2 iterations; over longer runs f32 rounding may flip a sample.
 */
async function backendParity(gpu: GPU, iters: number, kernelVariant?: KernelVariant): Promise<string> {
  const lines: string[] = [];
  const { device, label } = await requestGpu(gpu);
  for (const set of [{}, { methods: 'ppo', group: '1', batch: '64' }, { task: 'tools', methods: 'cm2' }] as Record<string, string>[]) {
    let cfg = defaultConfig();
    for (const [k, v] of Object.entries(set)) cfg = withFieldText(cfg, k, v);
    const g = await createTrainer(cfg, (shape, params) => createGpuBackend(device, shape, params, { label, ...(kernelVariant ? { kernelVariant } : {}) }));
    const c = await createTrainer(cfg, createCpuBackend);
    let firstDiff = -1;
    let maxDiff = 0;
    let worst = '';
    for (let i = 0; i < iters; i++) {
      const [rg, rc] = [await g.step(), await c.step()];
      const hist = (r: Record<string, unknown>) => JSON.stringify([r.reward_mean, r.success_rate, r.adv_hist, r.tokens]);
      if (firstDiff < 0 && hist(rg) !== hist(rc)) firstDiff = rg.iter;
      if (firstDiff >= 0) continue;
      for (const [k, v] of Object.entries(rc)) {
        const w = (rg as Record<string, unknown>)[k];
        if (typeof v !== 'number' || typeof w !== 'number' || k === 'ms') continue;
        const d = Math.abs(v - w) / Math.max(1, Math.abs(v));
        if (d > maxDiff) [maxDiff, worst] = [d, `${k} at iteration ${rc.iter}`];
      }
    }
    g.destroy();
    c.destroy();
    const name = Object.keys(set).length ? Object.entries(set).map(([k, v]) => `${k}=${v}`).join(' ') : 'defaults';
    lines.push(`parity ${name}: ${firstDiff < 0 ? `same rewards, success and advantage histograms for all ${iters} iterations` : `first difference at iteration ${firstDiff}`}; largest metric difference before it ${maxDiff.toExponential(2)} (${worst || 'none'})`);
  }
  device.destroy();
  return lines.join('\n');
}

async function main(argv: string[]): Promise<void> {
  const args = parseOrExplain(argv);
  const gpu = await loadDawn(args.module, args.dawnFlags);
  const t0 = Date.now();
  const results: BenchResults = {
    meta: {
      date: new Date().toISOString(),
      command: `npm run -s bench:dawn${argv.length ? ` -- ${argv.join(' ')}` : ''}`,
      node: process.version,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      cpuCount: cpus().length,
      chromiumFlags: [],
      browserVersion: `none: Node ${process.version} with Dawn (${args.module}, ${dawnCreateFlags(args.dawnFlags).join(' ')})`,
      sections: args.only,
      quick: args.quick,
      loadStart: loadavg(),
    },
    env: { userAgent: `Node ${process.version}`, chromiumVersion: null, hardwareConcurrency: cpus().length, crossOriginIsolated: false, adapter: await adapterEnv(gpu) },
    errors: {},
  };
  const a = results.env!.adapter;
  log(`adapter: ${a.available ? `${a.vendor} ${a.architecture} ${a.description ?? ''} fallback=${a.isFallbackAdapter}` : a.error}`);
  const plan = makePlan(args.quick, !(a.available && a.isFallbackAdapter === false));
  const section = sectionRunner(results, log);
  if (args.only.includes('iteration')) {
    await section('iteration', async () => {
      const rows: IterationRow[] = await iterationSection(gpu, { scales: plan.iteration.scales, gpuScales: plan.iteration.gpuScales, cpuScales: [], ...(args.kernelVariant ? { kernelVariant: args.kernelVariant } : {}) }, log, 'node');
      for (const spec of plan.iteration.nodeScales) {
        rows.push(...(await benchIterations(spec, [{ backend: 'cpu', where: 'node', factory: createCpuBackend }], log)));
      }
      results.iteration = rows;
    });
  }
  if (args.only.includes('selftest')) {
    // Every kernel against its CPU reference on this adapter (the ?selftest page's cases).
    await section('selftest', async () => {
      const { device } = await requestGpu(gpu);
      const rows = await runSelfTest(device, () => {});
      device.destroy();
      const env = { vendor: a.vendor ?? '', architecture: a.architecture ?? '', description: a.description ?? '', isFallbackAdapter: Boolean(a.isFallbackAdapter) };
      log(formatReport(env, rows));
      const bad = rows.filter((r) => !r.pass);
      if (bad.length) throw new Error(`selftest: ${bad.length} of ${rows.length} checks failed (${[...new Set(bad.map((r) => r.kernel))].join(', ')})`);
    });
  }
  if (args.only.includes('parity')) {
    await section('parity', async () => void log(await backendParity(gpu, PARITY_ITERS, args.kernelVariant)));
  }
  if (args.only.includes('kernels')) {
    results.launch = plan.iteration.nodeScales.map((sc) => ({ scale: sc.name, ...launchShapes(configFor(sc.set)) }));
    const kernelPlan = {
      ...plan.kernels,
      ...(args.kernelBatches ? { batches: args.kernelBatches, groups: args.kernelGroups } : {}),
      ...(args.kernels ? { only: args.kernels } : {}),
    };
    await section('kernels', async () => void (results.kernels = await kernelsSection(gpu, kernelPlan, log)));
  }
  if (args.only.includes('peer')) {
    // TF.js's WebGPU backend and our GPU backend look for navigator.gpu, as in a browser.
    const g = globalThis as { navigator?: { gpu?: GPU } };
    if (g.navigator) Object.defineProperty(g.navigator, 'gpu', { value: gpu, configurable: true });
    else g.navigator = { gpu };
    const wasmPath = resolve(args.wasmPath) + '/';
    const runs = args.peerBatches?.map((b) => ({ ...plan.peer, scaleName: `batch ${b}`, set: { ...plan.peer.set, batch: String(b) } })) ?? [plan.peer];
    await section('peer', async () => {
      const peer: NonNullable<BenchResults['peer']> = { results: [], notes: [] };
      for (const run of runs) {
        const r = await runPeerBench({ ...run, wasmPath }, log);
        peer.results.push(...r.results);
        peer.notes.push(...r.notes.filter((n) => !peer.notes.includes(n)));
      }
      results.peer = peer;
    });
  }
  results.meta.wallSeconds = (Date.now() - t0) / 1000;
  results.meta.loadEnd = loadavg();
  writeFileSync(args.out, JSON.stringify(results, null, 1));
  process.stdout.write(renderMarkdown(results));
  log(`results written to ${args.out}`);
}

function parseOrExplain(argv: string[]): DawnArgs {
  try {
    return parse(argv);
  } catch (e) {
    throw new UsageError(`${(e as Error).message}\nusage: npm run -s bench:dawn -- [--quick] [--only ${SECTIONS.join(',')}] [--out FILE] [--webgpu MODULE] (bench/dawn.ts lists every flag)`);
  }
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (e) => {
    log(`error: ${e instanceof UsageError ? e.message : ((e as Error).stack ?? e)}`);
    process.exit(e instanceof UsageError ? 2 : 1);
  },
);
