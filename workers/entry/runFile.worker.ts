/**
 * Reads an imported run file off the page's main thread. A run file may be tens of megabytes
 * (100,000 rows, a batch of long trajectories); reading, JSON.parse and the schema's checks of one
 * took seconds, all of it a single main-thread task. Here the file is read in chunks (progress after
 * each, refused past the cap while reading), then parsed and checked by the same readImport the
 * CLI and the tests use (a run file, or a verl, TRL or W&B metric log); the page receives the validated run, or the problems by path.
 */
import './noEvalHere';
import { MAX_RUN_FILE_CHARS } from '../formats/runFile';
import { readImport, type ImportRead } from '../formats/importRun';
import type { RunFileReply, RunFileRequest } from './runFileApi';

const post = (m: RunFileReply) => (self as unknown as Worker).postMessage(m);

/** A progress message at most this often: each is a task on the page. */
const PROGRESS_MS = 100;

async function read({ file, fileName, config }: RunFileRequest): Promise<ImportRead> {
  const total = file.size;
  const tooLarge = (n: number): ImportRead => ({ ok: false, errors: [{ path: '(file)', message: `too large (${n} bytes or more; at most ${MAX_RUN_FILE_CHARS})` }] });
  if (total > MAX_RUN_FILE_CHARS) return tooLarge(total);
  const reader = file.stream().getReader();
  const decoder = new TextDecoder();
  const parts: string[] = [];
  let read = 0;
  let last = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    read += value.byteLength;
    // The cap while reading, not after: a Blob's size is what it says, but nothing is read past the cap.
    if (read > MAX_RUN_FILE_CHARS) {
      await reader.cancel();
      return tooLarge(read);
    }
    parts.push(decoder.decode(value, { stream: true }));
    if (Date.now() - last >= PROGRESS_MS) {
      last = Date.now();
      post({ type: 'progress', stage: 'reading', read, total });
    }
  }
  parts.push(decoder.decode());
  post({ type: 'progress', stage: 'checking' });
  return readImport(parts.join(''), config, fileName);
}

/** Rows per message: about 20-50 ms of the page's time to receive on a busy 2-core machine. */
const ROWS_PER_PART = 2000;
/** Tokens per message of trajectories (a token is some fifteen numbers). */
const TOKENS_PER_PART = 8192;

/** Sends a parsed run's rows and trajectories in slices, then the rest of it. */
function send(result: ImportRead): void {
  if (!result.ok) return post({ type: 'done', result });
  const { metrics, batch } = result.run;
  for (let i = 0; i < metrics.length; i += ROWS_PER_PART) post({ type: 'rows', rows: metrics.slice(i, i + ROWS_PER_PART) });
  const trajs = batch?.trajs ?? [];
  for (let i = 0; i < trajs.length; ) {
    let j = i;
    let tokens = 0;
    while (j < trajs.length && (j === i || tokens + trajs[j]!.tokens.length <= TOKENS_PER_PART)) tokens += trajs[j++]!.tokens.length;
    post({ type: 'trajs', trajs: trajs.slice(i, j) });
    i = j;
  }
  post({ type: 'done', result: { ok: true, run: { ...result.run, metrics: [], batch: batch ? { ...batch, trajs: [] } : null }, log: result.log } });
}

self.onmessage = (e: MessageEvent<RunFileRequest>) => {
  read(e.data).then(
    (result) => send(result),
    (err: unknown) => post({ type: 'done', result: { ok: false, errors: [{ path: '(file)', message: `could not be read (${err instanceof Error ? err.message : String(err)})` }] } }),
  );
};
