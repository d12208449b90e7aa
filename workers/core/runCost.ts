/**
 * What a run would cost before it is built: memory (the CPU backend's per-row arrays, which the
 * GPU backend's buffers roughly match) and seconds per iteration on the CPU backend, from the
 * multiply-adds of its forwards and backwards. Rough by design (within a few times): it decides
 * whether a link asks before it starts a run, not what a run may do.
 */
import type { RunConfig } from './config';
import { cpuBackendBytes } from './cpuBackend';
import { createEnv } from './envs';
import { buildShape } from './trainer';

export interface RunCost {
  /** Bytes of the run's per-row arrays. */
  bytes: number;
  /** Seconds per iteration on the CPU backend (a GPU one is usually faster). */
  cpuSecondsPerIter: number;
}

/**
 * Multiply-adds per second of the CPU backend, fitted to a measured iteration: the classroom
 * default at about 13 ms in Node (BENCHMARKS.md); it puts 1,024 x 64 rollouts at 512 hidden units
 * near a minute, where a browser tab was seen at 10 s or more.
 */
const CPU_MACS_PER_SECOND = 5e9;

export function estimateRunCost(cfg: RunConfig): RunCost {
  const shape = buildShape(cfg, createEnv(cfg));
  const { V, K, D, H } = shape.dims;
  const rows = shape.N * shape.Tp;
  // One forward of a row: the context's embeddings into the hidden layer, the hidden layer into the vocabulary.
  const forward = K * D * H + H * V;
  // Sampling (a forward per token), the old and reference policies' forwards, and per epoch a
  // forward and a backward (about twice a forward) for every row.
  const macs = rows * forward * (3 + 3 * shape.epochs);
  return { bytes: cpuBackendBytes(shape), cpuSecondsPerIter: macs / CPU_MACS_PER_SECOND };
}
