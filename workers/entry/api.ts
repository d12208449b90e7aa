/**
 * The trainer's API as the UI sees it through Comlink (`workers/entry/trainer.worker.ts` exposes
 * `createTrainerApi()` from `workers/entry/trainerApi.ts`). Only plain data crosses.
 */
import type { RunConfig } from '../core/config';
import type { MetricRow } from '../core/metrics';
import type { LabResult } from '../core/batchLab';
import type { LabDump } from '../explain/types';
import type { BatchPack } from '../formats/batchDump';
import type { TrainerSnapshot } from '../core/trainer';
import type { RunCost } from '../core/runCost';
import type { RunResult } from '../content/lessons';
import type { FrameworkExport } from '../formats/frameworkExport';
import type { Framework } from '../formats/frameworkNames';

export type { BackendChoice } from '../core/backend';
import type { BackendChoice } from '../core/backend';

export interface BackendInfo {
  kind: 'gpu' | 'cpu';
  /** Adapter description ("google swiftshader ...") or "CPU (TypeScript reference kernels)". */
  label: string;
  /** True when the adapter is a software fallback (SwiftShader): the GPU path is slow there. */
  isFallbackAdapter: boolean;
  /** Why the CPU backend runs, when it does ("this browser has no WebGPU", ...). */
  fallbackReason: string | null;
}

/** What happened to a run besides its metrics; sent to the callback given to subscribe(). */
export type TrainerEvent =
  /** The GPU device was lost; the run moved to a new device from its last snapshot and goes on. */
  | { type: 'device-lost'; iter: number; message: string }
  /** NaN or Inf appeared; the run rolled back to its last finite snapshot and paused. */
  | { type: 'non-finite'; iter: number; rolledBackTo: number; quantities: string[]; message: string }
  /** A new finite snapshot (every few iterations): enough to restart the run if the worker dies. */
  | { type: 'snapshot'; snapshot: TrainerSnapshot }
  /**
   * Iteration `iter` is still computing (at most one a second). The CPU backend's loops keep the
   * worker from answering pings, for tens of seconds at the largest settings; this says it is busy,
   * not hung.
   */
  | { type: 'working'; iter: number }
  /**
   * The pretrained start (init=pretrained) is training: steps done of steps; the last event of a
   * start carries its figures. A cached start sends only that last one.
   */
  | { type: 'pretrain'; done: number; steps: number; start?: PretrainSummary };

/** What the page shows of a pretrained start. */
export interface PretrainSummary {
  startSuccess: number;
  scratchSuccess: number;
  demoSuccess: number;
  ms: number;
  /** The weights came with the page instead of being pretrained here (ms is then 0). */
  shipped: boolean;
}

/**
 * Resuming a run in a fresh worker: restore the snapshot (or start from the config's initial
 * weights without one), then replay silently up to `replayTo`.
 */
export interface ResumeFrom {
  snapshot?: TrainerSnapshot;
  replayTo: number;
}

/** Faults the reliability tests provoke on purpose. */
export type DebugFault = 'nan' | 'lose-device' | 'crash' | 'hang';
/** Faults provoked from the page: `terminate` ends the worker with no word, as an out-of-memory kill does. */
export type PageFault = DebugFault | 'terminate';

export interface TrainerApi {
  /** Creates the backend and the run from a config (or resumes one); resets everything else. */
  configure(config: RunConfig, backend: BackendChoice, resume?: ResumeFrom): Promise<BackendInfo>;
  /**
   * Carries the running model (weights, reference, Adam state, iteration count) into a changed
   * config from the next iteration on. Refused, with the reason, when the change alters the model's
   * shape or the task: those need a reset. Returns the snapshot the new settings start from: a
   * restart after a crash replays from it (never from one taken under the old settings).
   */
  applyConfig(config: RunConfig): Promise<{ applied: true; snapshot: TrainerSnapshot } | { applied: false; reason: string }>;
  /** Registers the callback for TrainerEvents (one at a time). */
  subscribe(onEvent: (e: TrainerEvent) => void): Promise<void>;
  /** What a run of `config` would cost (memory, CPU seconds per iteration), without building it. */
  estimateCost(config: RunConfig): Promise<RunCost>;
  /** Answers at once unless the worker is stuck: the UI's heartbeat. */
  ping(): Promise<number>;
  /** Provokes a fault (reliability tests): a NaN, a lost device, an uncaught error, a hang. */
  debug(fault: DebugFault, ms?: number): Promise<void>;
  /**
   * Trains until pause() or until iteration `untilIter` (if given); metrics arrive batched.
   * `delayMs` (default 0) waits that long between iterations: the UI's speed control.
   */
  start(onMetrics: (rows: MetricRow[]) => void, untilIter?: number, delayMs?: number): Promise<void>;
  pause(): Promise<void>;
  /** One iteration. */
  step(): Promise<MetricRow>;
  /**
   * One iteration, as step(), handing over the batch at each of its stages (docs/EXPLAIN.md "Step
   * through"): after the rewards, after the advantage, after each optimizer step, then the final
   * state (packBatch's), packed and transferred.
   */
  stepThrough(): Promise<{ row: MetricRow; packs: BatchPack[] }>;
  /** Re-initializes weights and optimizer from the config's seed. */
  reset(): Promise<void>;
  /** Readable text of trajectory n of the last batch, with its reward. */
  describeTrajectory(n: number): Promise<{ text: string; reward: number; group: number } | null>;
  /**
   * The last iteration's whole batch (docs/ARCHITECTURE.md "The batch dump"), packed in columns and
   * transferred (unpack it with batchDump.ts); null before the first iteration.
   */
  packBatch(): Promise<BatchPack | null>;
  /**
   * The same batch as its JSON file, written here: at 65,536 trajectories that is ~120 MB and
   * 1.5 s of JSON.stringify, which the page's thread should not do. A Blob crosses without a copy.
   */
  batchJson(): Promise<Blob | null>;
  /**
   * Batch lab: the last batch re-scored, without training, under each of `methodSets` (the run's
   * config with those methods): per-token advantages, aggregation and gradient weights. Throws
   * (with the reason) for a set the config refuses, or before the first iteration.
   */
  rescore(methodSets: string[][]): Promise<LabResult>;
  /**
   * One batch lab set as a batch the page's explainer reads (workers/explain/labDump.ts): the inputs
   * the lab read and its numbers for that set, so a clicked lab number can be rederived and checked.
   */
  labDump(methods: string[]): Promise<LabDump>;
  /**
   * Trains one lesson run on one seed, headless on the CPU backend, beside (not instead of) the
   * run this worker holds: the page's seed pool (app/lessons/seedPool.ts) trains a lesson's other
   * seeds so each line is checked on the mean over them. The last batch comes back only where a
   * claim reads it (workers/content/lessons.ts needsDump). `onIter` hears each iteration as it ends.
   * Other calls are served between its iterations.
   */
  trainLessonSeed(lessonId: string, runId: string, seed: number, onIter?: (iter: number) => void): Promise<RunResult>;
  /**
   * Stops the lesson seeds this worker trains, at their next iteration: their calls reject with
   * "lesson seed stopped". The page takes its own worker back for the run on screen this way.
   */
  stopLessonSeeds(): Promise<void>;
  /**
   * "Take it to a real run": `config` as verl overrides or a TRL config, with what has no
   * equivalent (workers/formats/frameworkExport.ts). Written here: it builds the task to read its
   * layout, which the page does not load.
   */
  frameworkExport(config: RunConfig, framework: Framework): Promise<FrameworkExport>;
  /** The recipe of `config` (workers/formats/recipe/) as a zipped folder, and its name and file count. */
  recipeZip(config: RunConfig, episodes: number): Promise<{ name: string; files: number; zip: Blob }>;
  dispose(): Promise<void>;
}
