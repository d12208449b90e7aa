/**
 * The messages of the run-file worker (workers/entry/runFile.worker.ts): the page sends the file,
 * the worker answers with its progress and then the parsed run, or the problems that name where
 * the file is wrong (workers/formats/runFile.ts). A verl, TRL or W&B metric log is read as well
 * (workers/formats/importRun.ts). Types only: the page imports nothing else.
 */
import type { MetricRow } from '../core/metrics';
import type { BatchDump } from '../formats/batchDump';
import type { RunConfig } from '../core/config';
import type { ImportRead } from '../formats/importRun';

export interface RunFileRequest {
  file: Blob;
  /** The file's name and the page's config: a metric log (not a run file) is shown under them. */
  fileName: string;
  config: RunConfig;
}

/**
 * A parsed run comes back in parts: its metric rows and its batch's trajectories a slice per
 * message, then the rest with those two lists empty. One message of 100,000 rows took the page 1-2.6 s
 * to receive (its structured clone is read on the main thread); a slice takes a short task.
 */
export type RunFileReply =
  | { type: 'progress'; stage: 'reading'; read: number; total: number }
  | { type: 'progress'; stage: 'checking' }
  | { type: 'rows'; rows: MetricRow[] }
  | { type: 'trajs'; trajs: BatchDump['trajs'] }
  | { type: 'done'; result: ImportRead };
