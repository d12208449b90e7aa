/**
 * Reads a run file in a worker of its own (workers/entry/runFile.worker.ts), so a large file
 * leaves the page responsive while it is read, parsed and checked; `onProgress` hears how far it
 * is. One worker per file, ended when it answers. Only types are imported from workers/.
 */
import type { MetricRow } from '../workers/core/metrics';
import type { BatchDump } from '../workers/formats/batchDump';
import type { RunConfig } from '../workers/core/config';
import type { ImportRead } from '../workers/formats/importRun';
import type { RunFileReply, RunFileRequest } from '../workers/entry/runFileApi';

export type RunFileProgress = Extract<RunFileReply, { type: 'progress' }>;

export function readRunFile(file: Blob, fileName: string, config: RunConfig, onProgress: (p: RunFileProgress) => void): Promise<ImportRead> {
  const w = new Worker(new URL('../workers/entry/runFile.worker.ts', import.meta.url), { type: 'module' });
  // The rows and trajectories arrive a slice per message (each a short task here), then the rest.
  const rows: MetricRow[] = [];
  const trajs: BatchDump['trajs'] = [];
  return new Promise<ImportRead>((resolve) => {
    w.addEventListener('message', (e: MessageEvent<RunFileReply>) => {
      const m = e.data;
      if (m.type === 'progress') onProgress(m);
      else if (m.type === 'rows') for (const r of m.rows) rows.push(r);
      else if (m.type === 'trajs') for (const t of m.trajs) trajs.push(t);
      else if (!m.result.ok) resolve(m.result);
      else {
        const { run } = m.result;
        resolve({ ok: true, run: { ...run, metrics: rows, batch: run.batch ? { ...run.batch, trajs } : null }, log: m.result.log });
      }
    });
    w.addEventListener('error', (e) => {
      e.preventDefault();
      resolve({ ok: false, errors: [{ path: '(file)', message: `could not be read (${e.message || 'the reader stopped'})` }] });
    });
    w.addEventListener('messageerror', () => resolve({ ok: false, errors: [{ path: '(file)', message: 'could not be read (the reader sent a message that could not be read)' }] }));
    w.postMessage({ file, fileName, config } satisfies RunFileRequest);
  }).finally(() => w.terminate());
}
