/**
 * The parallel part of the sweeps (cli/sweepTasks.ts, cli/sweepMethods.ts): each job runs in a
 * child process of the same script (`--job <json>`) at nice 10, so a sweep keeps a fixed number of
 * cores busy and one job's crash names the job.
 */
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';

/** Runs `script --job <json>` in a child process; resolves with the JSON of its last stdout line. */
export function runChild<J, R>(script: string, job: J): Promise<R> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, script, '--job', JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      if (child.pid) setPriority(child.pid, 10);
    } catch {
      // Not allowed to renice here: run at the parent's priority.
    }
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`job ${JSON.stringify(job)} exited with ${code}`));
      resolve(JSON.parse(out.trim().split('\n').pop()!) as R);
    });
  });
}

/** Runs every job through `run` with at most `parallel` at once; `onDone` sees each result as it lands. */
export async function runPool<J, R>(jobs: J[], parallel: number, run: (job: J) => Promise<R>, onDone: (r: R) => void): Promise<R[]> {
  const results: R[] = [];
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const r = await run(jobs[next++]!);
      results.push(r);
      onDone(r);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, jobs.length) }, worker));
  return results;
}
