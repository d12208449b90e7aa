/**
 * Section 1, in the page: every kernel of kernels/all.ts at several sizes, against its CPU reference
 * (same work, same page) and a plain copy of the same bytes on the same device. Kernel and copy
 * passes alternate (kernel, copy, kernel, copy, ...) so drift hits both alike, after a stretch of
 * sustained GPU work; the references run once every kernel of the size has been timed.
 * Interleaving the references too left the GPU idle between passes, and a hardware GPU then drops
 * to its idle clock: an H200 spent most of such a run at 345 of its 1,980 MHz, which slows a
 * kernel with more instructions per byte more than the copy (BENCHMARKS.md, "The H200 again").
 *
 * Each size also times the floor: a copy of one workgroup's 4 KiB, dispatched back to back in one
 * pass like the others, so each waits on the one before (the same buffers). On an H200 a copy of
 * 0.6 MB took 2.0-2.2 µs and one of 7 MB 2.9, so a dependent dispatch costs about 2 µs whatever its
 * size, and a kernel of k dispatches at the largest size spends k of those before its bytes count.
 * Rows carry their dispatches per call so the table can say how much of a kernel's time that explains.
 */
import { ALL_OPS } from '../../kernels/all';
import { gradNormKernel, optimizerStepKernel } from '../../kernels/optimizer/adam';
import { advantageKernel } from '../../kernels/advantage/advantage';
import { statsKernel } from '../../kernels/stats/stats';
import { BufferUsage, deviceSupports, MapMode, type KernelFeature } from '../../kernels/pipeline';
import { copyKernel, createGpuTimer, dispatchesFor, type GpuSample } from '../lib/gpuTimer';
import type { TimestampGrid } from '../lib/timestampGrid';
import { ADVANTAGE_FIXED_GROUP_CASE, GRAD_NORM_HARDWARE_CASE, OPTIMIZER_STEP_HARDWARE_CASE, kernelCases, kernelConfig, makeKernelData, paramKernelCases, sharedBuffers, STATS_CHUNK512_CASE, STATS_HARDWARE_CASE, STATS_HIST_COPIES_CASE, type KernelCase } from '../lib/kernelCases';
import { now, summarize, type Summary } from '../lib/stats';
import type { EncodingCost, KernelRow } from '../lib/types';

export interface KernelBenchOptions {
  /** Prompts per batch of each size: rows R = group * batch * Tp. */
  batches: number[];
  /** Rollouts per prompt of each size; 8 (the default config's) where absent. */
  groups?: number[];
  /** Hidden width of each size for the per-parameter kernels (gradNorm, adam). */
  paramHidden: number[];
  warmup: number;
  reps: number;
  /** Kernels to run (labels); all when absent. */
  only?: string[];
  /** A timed pass lasts about this long (dispatches per pass adapt). */
  passMs: number;
  maxDispatchesPerPass: number;
  /**
   * Copy passes back to back for this long before a cell's timed GPU passes, so a hardware GPU has
   * raised its clocks (0 on software adapters, whose clock is the CPU's).
   */
  gpuWarmMs: number;
  /**
   * Copy passes back to back for this long before each size's first cell (0: none). The clock
   * falls while the CPU builds a size's inputs and runs the previous size's references (seconds at
   * 589,824 rows), and on an H200 it took 2-3 s of steady work to climb back
   * (bench/results/h200-night/final-clocks.csv): in three runs the first cell at that size, with
   * only gpuWarmMs before it, ran its copy at 1.4-1.6 TB/s instead of 3.6-3.9.
   */
  gpuRampMs?: number;
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
 * What the table times, in order: every op, and after advantage, gradNorm, the optimizer step and stats the
 * same passes in the hardware variant's configuration (another configuration of the same
 * pipelines, not another op); after stats also its previous hardware layout, chunks of 512 rows,
 * to compare, and its histograms in copies (the hardware variant's configuration since).
 */
const BENCH_OPS = ALL_OPS.flatMap((def) => [
  { label: def.label as string, def },
  ...(def === advantageKernel ? [{ label: ADVANTAGE_FIXED_GROUP_CASE, def }] : []),
  ...(def === gradNormKernel ? [{ label: GRAD_NORM_HARDWARE_CASE, def }] : []),
  ...(def === optimizerStepKernel ? [{ label: OPTIMIZER_STEP_HARDWARE_CASE, def }] : []),
  ...(def === statsKernel
    ? [{ label: STATS_HARDWARE_CASE, def }, { label: STATS_CHUNK512_CASE, def }, { label: STATS_HIST_COPIES_CASE, def }]
    : []),
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

/** What the bench needs of a kernel or two-pass reduction (kernels/pipeline.ts, kernels/reduce.ts). */
interface BenchKernel {
  bind(b: unknown, c: unknown): unknown;
  encode(p: GPUComputePassEncoder, call: unknown): void;
  destroy(): void;
}

/** Dispatches one encode of `kernel` records: a stand-in pass counts them, nothing reaches the GPU. */
export function dispatchesPerCall(kernel: Pick<BenchKernel, 'encode'>, call: unknown): number {
  let n = 0;
  const none = () => {};
  const pass = {
    label: '', setPipeline: none, setBindGroup: none, pushDebugGroup: none, popDebugGroup: none, insertDebugMarker: none, end: none,
    dispatchWorkgroups: () => void n++,
    dispatchWorkgroupsIndirect: () => void n++,
  };
  kernel.encode(pass as unknown as GPUComputePassEncoder, call);
  return n;
}

interface GpuCell {
  label: string;
  c: KernelCase;
  perCall: number;
  nK: number;
  nC: number;
  ks: GpuSample[];
  cs: GpuSample[];
}

/** A copy of `n4` vec4s with buffers of its own: what to encode, and what frees them. */
function copyOf(device: GPUDevice, copy: ReturnType<typeof copyKernel.create>, n4: number) {
  const usage = BufferUsage.STORAGE | BufferUsage.COPY_SRC | BufferUsage.COPY_DST;
  const src = device.createBuffer({ size: 16 * n4, usage });
  const dst = device.createBuffer({ size: 16 * n4, usage });
  const call = copy.bind({ src, dst }, { n4 });
  return {
    dst,
    encode: (p: GPUComputePassEncoder) => copy.encode(p, call as never),
    destroy() {
      src.destroy();
      dst.destroy();
    },
  };
}

/**
 * One cell's GPU side: warm-up and calibration, `gpuWarmMs` of copy passes, then kernel and copy
 * passes in turn. Nothing runs on the CPU in between, so the GPU's clocks are those of steady work.
 */
async function timeGpuCell(
  device: GPUDevice,
  o: KernelBenchOptions,
  timer: ReturnType<typeof createGpuTimer>,
  copy: ReturnType<typeof copyKernel.create>,
  kernel: BenchKernel,
  buffers: Record<string, GPUBuffer>,
  label: string,
  c: KernelCase,
): Promise<GpuCell> {
  device.pushErrorScope('validation');
  const call = kernel.bind(buffers, c.config);
  const copied = copyOf(device, copy, Math.max(1, Math.ceil(c.bytes / 2 / 16)));
  const err = await device.popErrorScope();
  if (err) throw new Error(`kernel ${label}: ${err.message}`);
  const perCall = dispatchesPerCall(kernel, call);
  const encK = (p: GPUComputePassEncoder) => kernel.encode(p, call);
  const encC = copied.encode;
  try {
    // Warm-up (first dispatch, pipeline state) and calibration: one dispatch's time (timestamps
    // when there are any: the wall clock adds the submit cost). Warm-ups stop early (after the
    // first) once they have used half the cell budget.
    const single = (x: GpuSample) => x.gpuMs ?? x.wallMs;
    let kSingle = Infinity;
    let cSingle = Infinity;
    let spent = 0;
    for (let w = 0; w < o.warmup && (w === 0 || spent < o.cellBudgetMs / 2); w++) {
      const x = await timer.time(encK, 1);
      const y = await timer.time(encC, 1);
      kSingle = Math.min(kSingle, single(x));
      cSingle = Math.min(cSingle, single(y));
      spent += x.wallMs + y.wallMs;
    }
    const nK = dispatchesFor(kSingle, o.passMs, o.maxDispatchesPerPass);
    const nC = dispatchesFor(cSingle, o.passMs, o.maxDispatchesPerPass);
    const repsK = repsFor(o, kSingle, nK);
    const repsC = repsFor(o, cSingle, nC);
    const ks: GpuSample[] = [];
    const cs: GpuSample[] = [];
    for (const t0 = now(); now() - t0 < o.gpuWarmMs; ) await timer.time(encC, nC);
    for (let i = 0; i < Math.max(repsK, repsC); i++) {
      if (i < repsK) ks.push(await timer.time(encK, nK));
      if (i < repsC) cs.push(await timer.time(encC, nC));
    }
    return { label, c, perCall, nK, nC, ks, cs };
  } finally {
    copied.destroy();
  }
}

/** Passes of `copied` (16 MiB read and written) back to back for `ms` (KernelBenchOptions.gpuRampMs). */
async function rampGpu(timer: ReturnType<typeof createGpuTimer>, copied: ReturnType<typeof copyOf>, ms: number): Promise<number> {
  let passes = 0;
  for (const t0 = now(); now() - t0 < ms; passes++) await timer.time(copied.encode, 8);
  return passes;
}

/**
 * The floor of a dependent dispatch (module comment): `reps` passes of `n` copies of one
 * workgroup's 256 vec4s each, per dispatch.
 */
async function timeFloor(timer: ReturnType<typeof createGpuTimer>, copied: ReturnType<typeof copyOf>, n: number, reps: number): Promise<Summary> {
  await timer.time(copied.encode, n);
  const xs: GpuSample[] = [];
  for (let i = 0; i < reps; i++) xs.push(await timer.time(copied.encode, n));
  return kernelTime(pickGpu(xs));
}

/** Dispatches per pass when timing their encoding: several iterations' worth (a default iteration records 56). */
const ENCODING_DISPATCHES = 256;

/**
 * The CPU side of recording `n` dispatches of `copied` in a pass, then finishing and submitting
 * it, `reps` times after one warm-up; each pass is waited for before the next. Then a readback's
 * round trip as a rollout turn makes one, `reps` times after one warm-up. In a browser this is the
 * page's or worker's time (Chromium serializes every call to its GPU process); the GPU's own time
 * per dispatch is the floor.
 */
async function timeEncoding(device: GPUDevice, copied: ReturnType<typeof copyOf>, n: number, reps: number): Promise<EncodingCost> {
  const dispatchUs: number[] = [];
  const submitUs: number[] = [];
  for (let r = 0; r <= reps; r++) {
    const t0 = now();
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    for (let i = 0; i < n; i++) copied.encode(pass);
    pass.end();
    const t1 = now();
    device.queue.submit([enc.finish()]);
    const t2 = now();
    await device.queue.onSubmittedWorkDone();
    if (r > 0) {
      dispatchUs.push(((t1 - t0) * 1e3) / n);
      submitUs.push((t2 - t1) * 1e3);
    }
  }
  // A readback's round trip, as a turn of the rollout makes one: a pass of one dispatch, a copy of
  // its 4 KiB into a mappable buffer in the same submit, then mapAsync until the bytes are here.
  const read = device.createBuffer({ size: 4096, usage: BufferUsage.MAP_READ | BufferUsage.COPY_DST });
  const readbackUs: number[] = [];
  try {
    for (let r = 0; r <= reps; r++) {
      const t0 = now();
      const enc = device.createCommandEncoder();
      const pass = enc.beginComputePass();
      copied.encode(pass);
      pass.end();
      enc.copyBufferToBuffer(copied.dst, 0, read, 0, 4096);
      device.queue.submit([enc.finish()]);
      await read.mapAsync(MapMode.READ);
      new Uint8Array(read.getMappedRange()).slice();
      read.unmap();
      if (r > 0) readbackUs.push((now() - t0) * 1e3);
    }
  } finally {
    read.destroy();
  }
  return { dispatches: n, dispatchUs: summarize(dispatchUs), submitUs: summarize(submitUs), readbackUs: summarize(readbackUs) };
}

/** Repetitions of `n` runs of `singleMs` each inside the cell budget (never below 3). */
const repsFor = (o: KernelBenchOptions, singleMs: number, n: number) =>
  Math.max(3, Math.min(o.reps, Math.floor(o.cellBudgetMs / Math.max(singleMs * n, 1e-3))));

/** One cell's CPU reference: warm-up (JIT), calibration, then timed repetitions of nCpu runs each. */
function timeCpuCell(o: KernelBenchOptions, c: KernelCase): { cpu: number[]; nCpu: number } {
  let cpuSingle = Infinity;
  let spent = 0;
  for (let w = 0; w < o.warmup && (w === 0 || spent < o.cellBudgetMs / 2); w++) {
    const t = now();
    c.cpu();
    const dt = now() - t;
    cpuSingle = Math.min(cpuSingle, dt);
    spent += dt;
  }
  // The reference runs as often per repetition as a kernel per pass (timer resolution).
  const nCpu = dispatchesFor(cpuSingle, o.passMs, o.maxDispatchesPerPass);
  const cpu: number[] = [];
  for (let i = 0; i < repsFor(o, cpuSingle, nCpu); i++) {
    const t = now();
    for (let j = 0; j < nCpu; j++) c.cpu();
    cpu.push((now() - t) / nCpu);
  }
  return { cpu, nCpu };
}

export async function runKernelBench(
  device: GPUDevice,
  o: KernelBenchOptions,
): Promise<{ rows: KernelRow[]; unknownBindings: string[]; timestampGrid?: TimestampGrid; encoding?: EncodingCost }> {
  const timer = createGpuTimer(device);
  const copy = copyKernel.create(device);
  const rows: KernelRow[] = [];
  const unknown: string[] = [];
  let encoding: EncodingCost | undefined;
  try {
    for (const [si, batch] of o.batches.entries()) {
      const t0 = now();
      const group = o.groups?.[si] ?? 8;
      const data = makeKernelData(kernelConfig(batch, { group: String(group) }));
      const cases = { ...kernelCases(data), ...paramKernelCases({ ...data.dims, H: o.paramHidden[si] ?? data.dims.H }, data.shape.optim) };
      const pool = bufferPool(device, sharedBuffers(data), unknown);
      o.log(`kernels: size ${si + 1}/${o.batches.length} (batch ${batch}, group ${group}, R=${data.R}) inputs ready in ${(now() - t0).toFixed(0)} ms`);
      if (o.gpuRampMs) {
        const ramp = copyOf(device, copy, (16 << 20) / 16);
        const passes = await rampGpu(timer, ramp, o.gpuRampMs).finally(() => ramp.destroy());
        o.log(`kernels: ${passes} copy passes (${o.gpuRampMs} ms) before the size's first cell`);
      }
      const tiny = copyOf(device, copy, 256);
      const floorMs = await timeFloor(timer, tiny, o.maxDispatchesPerPass, o.reps);
      o.log(`kernels: a dependent dispatch's floor ${(floorMs.min * 1e3).toFixed(2)} µs (fastest of ${floorMs.n}; median ${(floorMs.median * 1e3).toFixed(2)})`);
      if (!encoding) {
        encoding = await timeEncoding(device, tiny, ENCODING_DISPATCHES, o.reps).finally(() => tiny.destroy());
        o.log(
          `kernels: encoding a dispatch ${encoding.dispatchUs.median.toFixed(2)} µs, finishing and submitting a pass ${encoding.submitUs.median.toFixed(1)} µs, ` +
            `a 4 KiB readback's round trip ${encoding.readbackUs?.median.toFixed(0)} µs (medians of ${encoding.dispatchUs.n})`,
        );
      } else tiny.destroy();
      // Every kernel of the size on the GPU first, then every CPU reference: a reference's time
      // would leave the GPU idle before the next cell (module comment).
      const cells: GpuCell[] = [];
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
        const kernel = (def as unknown as { create(d: GPUDevice): BenchKernel }).create(device);
        try {
          cells.push(await timeGpuCell(device, o, timer, copy, kernel, pool.forCase(c), label, c));
        } finally {
          kernel.destroy();
        }
      }
      for (const { label, c, perCall, nK, nC, ks, cs } of cells) {
        const { cpu, nCpu } = timeCpuCell(o, c);
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
          dispatchesPerCall: perCall,
          floorMs,
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
      }
      pool.destroy();
    }
  } finally {
    copy.destroy();
    timer.destroy();
  }
  return { rows, unknownBindings: [...new Set(unknown)], ...(timer.timestamps ? { timestampGrid: timer.grid() } : {}), ...(encoding ? { encoding } : {}) };
}
