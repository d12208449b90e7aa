/**
 * Section 1, in the page: every kernel of kernels/all.ts at several sizes, against its CPU reference
 * (same work, same page) and a plain copy of the same bytes on the same device, interleaved
 * (kernel, reference, copy, kernel, reference, copy, ...) so drift hits all three alike.
 */
import { ALL_OPS } from '../../kernels/all';
import { gradNormKernel } from '../../kernels/adam';
import { BufferUsage, deviceSupports, type KernelFeature } from '../../kernels/pipeline';
import { copyKernel, createGpuTimer, dispatchesFor, type GpuSample } from '../lib/gpuTimer';
import { GRAD_NORM_HARDWARE_CASE, kernelCases, kernelConfig, makeKernelData, paramKernelCases, sharedBuffers, type KernelCase } from '../lib/kernelCases';
import { now, summarize, type Summary } from '../lib/stats';
import type { KernelRow } from '../lib/types';

export interface KernelBenchOptions {
  /** Prompts per batch of each size (group 8): rows R = 8 * batch * Tp. */
  batches: number[];
  /** Hidden width of each size for the per-parameter kernels (gradNorm, adam, finiteCheck). */
  paramHidden: number[];
  warmup: number;
  reps: number;
  /** Kernels to run (labels); all when absent. */
  only?: string[];
  /** A timed pass lasts about this long (dispatches per pass adapt). */
  passMs: number;
  maxDispatchesPerPass: number;
  /**
   * Wall-time budget of one cell's timed repetitions of one implementation: above it the reps drop
   * (never below 3) and the row says so. Keeps the largest CPU references inside the run budget.
   */
  cellBudgetMs: number;
  log: (msg: string) => void;
}

type Src = KernelCase['buffers'][string];

/** GPU buffers by binding name, made on first use; a name nobody declared gets a scratch buffer. */
function bufferPool(device: GPUDevice, shared: KernelCase['buffers'], unknown: string[]) {
  const made: GPUBuffer[] = [];
  const usage = BufferUsage.STORAGE | BufferUsage.COPY_SRC | BufferUsage.COPY_DST;
  const make = (src: Src): GPUBuffer => {
    const bytes = 'words' in src && !ArrayBuffer.isView(src) ? 4 * src.words : (src as ArrayBufferView).byteLength;
    const b = device.createBuffer({ size: Math.max(16, Math.ceil(bytes / 16) * 16), usage });
    if (ArrayBuffer.isView(src)) device.queue.writeBuffer(b, 0, src as Float32Array);
    made.push(b);
    return b;
  };
  const sharedMade = new Map<string, GPUBuffer>();
  return {
    forCase(c: KernelCase): Record<string, GPUBuffer> {
      const own = new Map<string, GPUBuffer>();
      return new Proxy({} as Record<string, GPUBuffer>, {
        get(_, name) {
          if (typeof name !== 'string') return undefined;
          if (name in c.buffers) {
            if (!own.has(name)) own.set(name, make(c.buffers[name]!));
            return own.get(name);
          }
          if (name in shared) {
            if (!sharedMade.has(name)) sharedMade.set(name, make(shared[name]!));
            return sharedMade.get(name);
          }
          unknown.push(`${c.label}.${name}`);
          if (!own.has(name)) own.set(name, make({ words: 1 << 16 }));
          return own.get(name);
        },
      });
    },
    destroy() {
      for (const b of made.splice(0)) b.destroy();
    },
  };
}

/**
 * What the table times, in order: every op, and after gradNorm the same two passes with the
 * hardware variant's block (another configuration of the same pipelines, not another op).
 */
const BENCH_OPS = ALL_OPS.flatMap((def) => [
  { label: def.label as string, def },
  ...(def === gradNormKernel ? [{ label: GRAD_NORM_HARDWARE_CASE, def }] : []),
]);

/** Timestamp summary when at least half the passes gave a usable delta (bad ones are dropped). */
function pickGpu(xs: GpuSample[]): { gpu: Summary | null; wall: Summary } {
  const ts = xs.map((x) => x.gpuMs).filter((x): x is number => x !== null);
  return { gpu: ts.length * 2 >= xs.length && ts.length > 0 ? summarize(ts) : null, wall: summarize(xs.map((x) => x.wallMs)) };
}

/** The time a row reports: timestamps when there are any, else wall clock. */
export function kernelTime(s: { gpu: Summary | null; wall: Summary }): Summary {
  return s.gpu ?? s.wall;
}

export async function runKernelBench(device: GPUDevice, o: KernelBenchOptions): Promise<{ rows: KernelRow[]; unknownBindings: string[] }> {
  const timer = createGpuTimer(device);
  const copy = copyKernel.create(device);
  const rows: KernelRow[] = [];
  const unknown: string[] = [];
  try {
    for (const [si, batch] of o.batches.entries()) {
      const t0 = now();
      const data = makeKernelData(kernelConfig(batch));
      const cases = { ...kernelCases(data), ...paramKernelCases({ ...data.dims, H: o.paramHidden[si] ?? data.dims.H }, data.shape.optim) };
      const pool = bufferPool(device, sharedBuffers(data), unknown);
      o.log(`kernels: size ${si + 1}/${o.batches.length} (batch ${batch}, R=${data.R}) inputs ready in ${(now() - t0).toFixed(0)} ms`);
      for (const { label, def } of BENCH_OPS) {
        if (o.only && !o.only.includes(label)) continue;
        const c = cases[label];
        if (!deviceSupports(device, def as { requires?: KernelFeature })) {
          rows.push({ kernel: label, sizeIndex: si, size: '-', skipped: `the device has no ${(def as { requires?: string }).requires}` } as KernelRow);
          continue;
        }
        if (!c) {
          rows.push({ kernel: label, sizeIndex: si, size: '-', skipped: 'no benchmark case (new kernel?)' } as KernelRow);
          continue;
        }
        const kernel = (def as unknown as { create(d: GPUDevice): { bind(b: unknown, c: unknown): unknown; encode(p: GPUComputePassEncoder, call: unknown): void; destroy(): void } }).create(device);
        device.pushErrorScope('validation');
        const call = kernel.bind(pool.forCase(c), c.config);
        const n4 = Math.max(1, Math.ceil(c.bytes / 2 / 16));
        const usage = BufferUsage.STORAGE | BufferUsage.COPY_SRC | BufferUsage.COPY_DST;
        const src = device.createBuffer({ size: 16 * n4, usage });
        const dst = device.createBuffer({ size: 16 * n4, usage });
        const copyCall = copy.bind({ src, dst }, { n4 });
        const err = await device.popErrorScope();
        if (err) throw new Error(`kernel ${label}: ${err.message}`);
        const encK = (p: GPUComputePassEncoder) => kernel.encode(p, call);
        const encC = (p: GPUComputePassEncoder) => copy.encode(p, copyCall as never);

        // Warm-up (first dispatch, pipeline state, JIT of the reference) and calibration: one
        // dispatch's time (timestamps when there are any: the wall clock adds the submit cost).
        let kSingle = Infinity;
        let cSingle = Infinity;
        let cpuSingle = Infinity;
        const single = (x: GpuSample) => x.gpuMs ?? x.wallMs;
        // Warm-ups stop early (after the first) once they have used half the cell budget.
        let kSpent = 0;
        let cpuSpent = 0;
        let cSpent = 0;
        for (let w = 0; w < o.warmup; w++) {
          const half = o.cellBudgetMs / 2;
          if (w === 0 || kSpent < half) {
            const x = await timer.time(encK, 1);
            kSingle = Math.min(kSingle, single(x));
            kSpent += x.wallMs;
          }
          if (w === 0 || cpuSpent < half) {
            const t = now();
            c.cpu();
            const dt = now() - t;
            cpuSingle = Math.min(cpuSingle, dt);
            cpuSpent += dt;
          }
          if (w === 0 || cSpent < half) {
            const x = await timer.time(encC, 1);
            cSingle = Math.min(cSingle, single(x));
            cSpent += x.wallMs;
          }
        }
        const nK = dispatchesFor(kSingle, o.passMs, o.maxDispatchesPerPass);
        const nC = dispatchesFor(cSingle, o.passMs, o.maxDispatchesPerPass);
        // The reference runs as often per repetition as the kernel per pass (timer resolution).
        const nCpu = dispatchesFor(cpuSingle, o.passMs, o.maxDispatchesPerPass);
        const repsFor = (singleMs: number, n: number) =>
          Math.max(3, Math.min(o.reps, Math.floor(o.cellBudgetMs / Math.max(singleMs * n, 1e-3))));
        const repsK = repsFor(kSingle, nK);
        const repsCpu = repsFor(cpuSingle, nCpu);
        const repsC = repsFor(cSingle, nC);
        const ks: GpuSample[] = [];
        const cs: GpuSample[] = [];
        const cpu: number[] = [];
        for (let i = 0; i < Math.max(repsK, repsCpu, repsC); i++) {
          if (i < repsK) ks.push(await timer.time(encK, nK));
          if (i < repsCpu) {
            const t = now();
            for (let j = 0; j < nCpu; j++) c.cpu();
            cpu.push((now() - t) / nCpu);
          }
          if (i < repsC) cs.push(await timer.time(encC, nC));
        }
        const k = pickGpu(ks);
        const cp = pickGpu(cs);
        const kt = kernelTime(k);
        const ct = kernelTime(cp);
        const cpuS = summarize(cpu);
        const row: KernelRow = {
          kernel: label,
          sizeIndex: si,
          size: c.size,
          bytes: c.bytes,
          flops: c.flops,
          dispatchesPerPass: nK,
          reps: { gpu: ks.length, cpu: cpu.length, copy: cs.length },
          cpuRunsPerRep: nCpu,
          gpuTimestampMs: k.gpu,
          gpuWallMs: k.wall,
          copyTimestampMs: cp.gpu,
          copyWallMs: cp.wall,
          copyDispatchesPerPass: nC,
          cpuMs: cpuS,
          gbps: c.bytes / (kt.median * 1e6),
          gflops: c.flops / (kt.median * 1e6),
          copyGbps: c.bytes / (ct.median * 1e6),
          cpuGbps: c.bytes / (cpuS.median * 1e6),
          gpuOverCpu: kt.median / cpuS.median,
        };
        rows.push(row);
        o.log(
          `kernels: ${label.padEnd(11)} ${c.size.padEnd(16)} gpu ${kt.median.toFixed(3)} ms  cpu ${cpuS.median.toFixed(3)} ms  ` +
            `${row.gbps.toFixed(2)} GB/s (copy ${row.copyGbps.toFixed(2)})`,
        );
        kernel.destroy();
        src.destroy();
        dst.destroy();
      }
      pool.destroy();
    }
  } finally {
    copy.destroy();
    timer.destroy();
  }
  return { rows, unknownBindings: [...new Set(unknown)] };
}
