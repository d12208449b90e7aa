/** The JSON shapes the benchmark page and the Node part produce (bench/results/latest.json). */
import type { Summary } from './stats';
import type { CpuParts } from './threadCpu';

export interface AdapterEnv {
  available: boolean;
  /** Why not, when unavailable. */
  error?: string;
  vendor?: string;
  architecture?: string;
  device?: string;
  description?: string;
  isFallbackAdapter?: boolean;
  features?: string[];
  timestampQuery?: boolean;
  limits?: Record<string, number>;
}

export interface PageEnv {
  userAgent: string;
  chromiumVersion: string | null;
  hardwareConcurrency: number;
  crossOriginIsolated: boolean;
  adapter: AdapterEnv;
}

export interface KernelRow {
  kernel: string;
  sizeIndex: number;
  size: string;
  skipped?: string;
  bytes: number;
  flops: number;
  dispatchesPerPass: number;
  /** Dispatches one call of the kernel records (each waits on the one before); absent in older results. */
  dispatchesPerCall?: number;
  /** One dependent dispatch's fixed cost at this size, per pass (bench/page/kernels.ts, timeFloor; the table uses its min); absent in older results. */
  floorMs?: Summary;
  reps: { gpu: number; cpu: number; copy: number };
  /** CPU reference runs per timed repetition (time / runs is reported). */
  cpuRunsPerRep: number;
  /** Per dispatch, from timestamp queries (null without timestamp-query). */
  gpuTimestampMs: Summary | null;
  /** Per dispatch, wall clock submit -> onSubmittedWorkDone over n dispatches. */
  gpuWallMs: Summary;
  copyTimestampMs: Summary | null;
  copyWallMs: Summary;
  copyDispatchesPerPass: number;
  cpuMs: Summary;
  /** bytes / median time (timestamps if any, else wall). */
  gbps: number;
  gflops: number;
  copyGbps: number;
  cpuGbps: number;
  /** GPU median / CPU median: below 1 the GPU kernel is faster. */
  gpuOverCpu: number;
}

export interface GpuCounts {
  submits: number;
  passes: number;
  dispatches: number;
  /** mapAsync calls: GPU-to-CPU readbacks. */
  readbacks: number;
  readbackBytes: number;
  writeBuffers: number;
  uploadBytes: number;
  buffersCreated: number;
  pipelinesCreated: number;
  bindGroupsCreated: number;
}

export interface IterationCounts {
  /** Means per timed iteration. */
  perIter: GpuCounts;
  rollout: GpuCounts;
  update: GpuCounts;
  /** Rollout turns actually run per iteration (mean; episodes may all end early). */
  turns: number;
  /** From workers/core/gpuBackend.ts dispatchCounts(shape) and the turns run. */
  expected: { dispatches: number; readbacks: number; submits: number };
  /** Buffers created during the timed iterations (expected 0: everything is made once). */
  buffersCreatedWhileTimed: number;
}

export interface IterationRow {
  backend: 'gpu' | 'cpu';
  where: 'chromium' | 'node';
  scale: string;
  batch: number;
  group: number;
  /** Trajectories (rollouts) per iteration. */
  N: number;
  /** Training rows N * Tp. */
  R: number;
  warmup: number;
  reps: number;
  iterMs: Summary;
  rolloutMs: Summary;
  /** Of the rollout, the time inside the backend's sampleTurn calls (absent in older results). */
  sampleTurnMs?: Summary;
  updateMs: Summary;
  /** Median policy tokens per iteration (the `tokens` metric: sampled tokens that enter the loss). */
  tokens: number;
  /** tokens / median iteration time. */
  tokensPerSec: number;
  turns: number;
  counts?: IterationCounts;
  /** Why the row has no numbers, or a failure. */
  note?: string;
  error?: string;
}

export interface PeerResult {
  /** Which TF.js backend ran ("webgpu", "wasm", "cpu") and why others did not. */
  tfBackend: string;
  tfBackendNotes: string[];
  scale: string;
  N: number;
  R: number;
  warmup: number;
  reps: number;
  /** Median update times (ms), interleaved: tfjs, ours GPU, ours CPU. */
  tfjsMs: Summary;
  oursGpuMs: Summary | null;
  oursCpuMs: Summary;
  /** tfjs / ours (below 1: tfjs is faster). */
  ratioVsGpu: number | null;
  ratioVsCpu: number;
  check: {
    loss: { tfjs: number; cpu: number; gpu: number | null };
    gradNorm: { tfjs: number; cpu: number; gpu: number | null };
    tolerance: number;
    pass: boolean;
  };
}

export interface ScalingPoint {
  x: number;
  label: string;
  R: number;
  iterMs: Summary;
  rolloutMs: Summary;
  updateMs: Summary;
}

export interface ScalingAxis {
  axis: 'batch' | 'seqLen' | 'vocab' | 'hidden';
  backend: 'gpu' | 'cpu';
  where: 'chromium' | 'node';
  points: ScalingPoint[];
  /** Log-log slopes of the minimum times (iteration, update, rollout) and of the median iteration time. */
  slopeIter: number;
  slopeIterMedian: number;
  slopeUpdate: number;
  slopeRollout: number;
  segmentSlopes: number[];
  /** Slopes of the analytic FLOPs (bench/lib/kernelCases.ts iterationFlops): what the time would do if it followed the work. */
  workSlopeUpdate: number;
  workSlopeIter: number;
  growth: string;
}

export interface PageRunResult {
  /** The iteration scale whose config the page trained with; absent in results saved before 2026-12-01 (the default). */
  scale?: string;
  backend: 'cpu' | 'gpu';
  statusText: string;
  seconds: number;
  iterations: number;
  longTasks: { count: number; totalMs: number; maxMs: number; p95Ms: number };
  /**
   * Main thread over the run, from DevTools Performance.getMetrics deltas: wall time inside tasks,
   * of it script, layout and style recalculation, and the thread's CPU time (ThreadTime).
   */
  mainThread: { taskMs: number; scriptMs: number; layoutMs: number; styleMs: number; cpuMs: number };
  chartUpdates: number;
  chartUpdatesPerSec: number;
  frames: number;
  framesPerSec: number;
  /**
   * After Pause: the last batch into the inspector (by itself up to 4,096 trajectories, else by
   * "Load the batch"), from the pause's end or the click to the reward matrix drawn, and the long
   * tasks meanwhile. Absent in results saved before 2026-12-01 (third session).
   */
  batchLoad?: { trajectories: number; ms: number; longTasks: number; maxMs: number };
  error?: string;
}

/** What recording GPU work costs the thread that records it (bench/page/kernels.ts timeEncoding). */
export interface EncodingCost {
  /** Dispatches encoded per pass. */
  dispatches: number;
  /** µs per dispatch: setPipeline, setBindGroup and dispatchWorkgroups, as every kernel's encode() records one. */
  dispatchUs: Summary;
  /** µs to finish the command buffer and submit it. */
  submitUs: Summary;
  /** µs from encoding a one-dispatch pass and a 4 KiB copy to having the bytes (submit, GPU, mapAsync), as a rollout turn's readback; absent in older results. */
  readbackUs?: Summary;
}

/** A lesson step's ready time in the built page (bench/pageRun.ts measureLessonReady). */
export interface LessonReadyResult {
  lesson: string;
  /** From navigation to every line of step 1 measured; NaN when it never was. */
  ms: number;
  /** Lines of the step, and how many held. */
  lines: number;
  held: number;
  /** The browser's CPU seconds in that window, by thread (Linux only). */
  cpu?: CpuParts;
  error?: string;
}
