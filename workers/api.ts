/**
 * The trainer's API as the UI sees it through Comlink (`workers/trainer.worker.ts` exposes
 * `createTrainerApi()` from `workers/trainerApi.ts`). Only plain data crosses.
 */
import type { RunConfig } from './config';
import type { MetricRow } from './metrics';
import type { BatchDump } from './trainer';

export type BackendChoice = 'auto' | 'gpu' | 'cpu';

export interface BackendInfo {
  kind: 'gpu' | 'cpu';
  /** Adapter description ("google swiftshader ...") or "CPU (TypeScript reference kernels)". */
  label: string;
  /** True when the adapter is a software fallback (SwiftShader): the GPU path is slow there. */
  isFallbackAdapter: boolean;
  /** Why the CPU backend runs, when it does ("this browser has no WebGPU", ...). */
  fallbackReason: string | null;
}

export interface TrainerEvent {
  type: 'error';
  message: string;
}

export interface TrainerApi {
  /** Creates the backend and the run from a config; resets everything. */
  configure(config: RunConfig, backend: BackendChoice): Promise<BackendInfo>;
  /** Trains until pause() or until iteration `untilIter` (if given); metrics arrive batched. */
  start(onMetrics: (rows: MetricRow[]) => void, untilIter?: number): Promise<void>;
  pause(): Promise<void>;
  /** One iteration. */
  step(): Promise<MetricRow>;
  /** Re-initializes weights and optimizer from the config's seed. */
  reset(): Promise<void>;
  /** Readable text of trajectory n of the last batch, with its reward. */
  describeTrajectory(n: number): Promise<{ text: string; reward: number; group: number } | null>;
  /** The last iteration's whole batch (DESIGN.md "The batch dump"); null before the first iteration. */
  dumpBatch(): Promise<BatchDump | null>;
  dispose(): Promise<void>;
}
