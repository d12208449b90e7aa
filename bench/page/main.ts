/**
 * The benchmark page: the real kernels and backends in headless Chromium, driven by bench/run.ts
 * through `window.__bench`. Every entry takes plain JSON options and returns plain JSON; progress
 * goes to the console with a `[bench]` prefix (run.ts forwards it to stderr).
 */
import { adapterEnv, iterationSection, kernelsSection, type IterationPageOptions } from '../lib/gpuSections';
import type { PageEnv } from '../lib/types';
import type { KernelBenchOptions } from './kernels';
import { runPeerBench, type PeerOptions } from './peer';
import { runScaling, type ScalingOptions } from './scaling';

const logEl = document.getElementById('log');
function log(msg: string): void {
  console.log(`[bench] ${msg}`);
  if (logEl) logEl.textContent += msg + '\n';
}

const api = {
  ready: true,
  async env(): Promise<PageEnv> {
    const m = /(?:Headless)?Chrom(?:e|ium)\/([\d.]+)/.exec(navigator.userAgent);
    return {
      userAgent: navigator.userAgent,
      chromiumVersion: m?.[1] ?? null,
      hardwareConcurrency: navigator.hardwareConcurrency,
      crossOriginIsolated: globalThis.crossOriginIsolated ?? false,
      adapter: await adapterEnv(navigator.gpu),
    };
  },
  kernels: (o: Omit<KernelBenchOptions, 'log'>) => kernelsSection(navigator.gpu, o, log),
  iteration: (o: IterationPageOptions) => iterationSection(navigator.gpu, o, log),
  peer: (o: PeerOptions) => runPeerBench(o, log),
  scaling: (o: ScalingOptions) => runScaling(o, log),
};

export type BenchApi = typeof api;

declare global {
  interface Window {
    __bench: BenchApi;
  }
}

window.__bench = api;
log('ready');
