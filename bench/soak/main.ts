/**
 * In-page soak run: the real trainer on the GPU backend (or the CPU one), with every GPU buffer
 * creation and destruction counted, reporting the JS heap and the live buffers at intervals to the
 * driver (bench/soak.ts) through window.__soakReport.
 */
import { defaultConfig, withFieldText } from '../../workers/core/config';
import { createCpuBackend } from '../../workers/core/cpuBackend';
import { requestGpu } from '../../workers/core/gpuDevice';
import { openGpuBackend } from '../../workers/core/gpuBackend';
import { createTrainer, type BackendFactory } from '../../workers/core/trainer';

export interface SoakSample {
  iter: number;
  heapMB: number;
  liveBuffers: number;
  seconds: number;
}

declare global {
  interface Window {
    __soakReport?: (s: SoakSample) => void;
    __soakDone?: (r: { ok: boolean; message: string }) => void;
  }
}

/** Wraps createBuffer and GPUBuffer.destroy so the page knows how many buffers are alive. */
function countBuffers(device: GPUDevice): () => number {
  const live = new Set<GPUBuffer>();
  const create = device.createBuffer.bind(device);
  device.createBuffer = (desc: GPUBufferDescriptor) => {
    const b = create(desc);
    live.add(b);
    const destroy = b.destroy.bind(b);
    b.destroy = () => {
      live.delete(b);
      destroy();
    };
    return b;
  };
  return () => live.size;
}

async function main(): Promise<void> {
  const q = new URLSearchParams(location.search);
  const iters = Number(q.get('iters') ?? 10000);
  const every = Number(q.get('every') ?? 500);
  let cfg = defaultConfig();
  for (const kv of (q.get('set') ?? 'batch=2,group=4,model.hidden=16').split(',')) {
    const [k, v] = kv.split('=');
    if (k && v !== undefined) cfg = withFieldText(cfg, k, v);
  }
  let factory: BackendFactory = createCpuBackend;
  let liveBuffers = () => 0;
  if (q.get('backend') !== 'cpu') {
    const g = await requestGpu(navigator.gpu);
    liveBuffers = countBuffers(g.device);
    factory = (shape, params) => openGpuBackend(g.device, shape, params, { label: g.label });
  }
  const heapMB = () => ((performance as Performance & { memory?: { usedJSHeapSize: number } }).memory?.usedJSHeapSize ?? NaN) / 2 ** 20;
  const t0 = performance.now();
  const trainer = await createTrainer(cfg, factory);
  const report = () => window.__soakReport?.({ iter: trainer.iter, heapMB: heapMB(), liveBuffers: liveBuffers(), seconds: (performance.now() - t0) / 1000 });
  report();
  for (let i = 1; i <= iters; i++) {
    await trainer.step();
    if (i % every === 0) {
      // Let the collector run between samples so the heap figure is the live set, not garbage.
      await new Promise((r) => setTimeout(r, 0));
      report();
    }
  }
  trainer.destroy();
  window.__soakDone?.({ ok: true, message: `done: ${iters} iterations` });
}

main().catch((e: unknown) => window.__soakDone?.({ ok: false, message: (e as Error).stack ?? String(e) }));
