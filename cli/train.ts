/**
 * Headless training in Node with the same engine as the browser worker.
 * stdout carries only JSON lines (one per iteration); messages go to stderr.
 */
import { writeFileSync } from 'node:fs';
import type { Backend, RunShape } from '../workers/core/backend';
import { CpuMemoryError, createCpuBackend } from '../workers/core/cpuBackend';
import { createTrainer, NonFiniteError } from '../workers/core/trainer';
import { dumpBatch } from '../workers/formats/batchDump';
import { helpText, parseArgs, UsageError, type CliOptions } from './args';
import { errorLine, printable } from './printable';

/** One line on stderr, escaped, then the exit: 2 for a bad input, 1 for a run that failed. */
function fail(message: string, status: 1 | 2): never {
  process.stderr.write(errorLine(message));
  process.exit(status);
}

// A reader that closes early (`| head -1`) ends the run quietly: nobody is left to read the rows.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  fail(`stdout: ${e.message}`, 1);
});

async function gpuFactory(): Promise<(shape: RunShape, params: Float32Array) => Promise<Backend>> {
  let create: (flags: string[]) => GPU;
  try {
    // Optional dependency: Dawn for Node, for machines with a real GPU (docs/ARCHITECTURE.md).
    const name = 'webgpu';
    ({ create } = (await import(/* @vite-ignore */ name)) as { create: (flags: string[]) => GPU });
  } catch {
    throw new UsageError('--backend gpu: needs the optional `webgpu` package (npm i webgpu) and a GPU; use --backend cpu');
  }
  const { requestGpu } = await import('../workers/core/gpuDevice');
  const { openGpuBackend } = await import('../workers/core/gpuBackend');
  const gpu = await requestGpu(create([]));
  return (shape, params) => openGpuBackend(gpu.device, shape, params, { label: gpu.label });
}

async function main(): Promise<void> {
  let opts: CliOptions;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    if (e instanceof UsageError) fail(e.message, 2);
    throw e;
  }
  if (opts.help) {
    process.stdout.write(helpText() + '\n');
    return;
  }
  const cpuOptions = opts.cpuMaxBytes === null ? {} : { maxBytes: opts.cpuMaxBytes };
  let factory: (shape: RunShape, params: Float32Array) => Backend | Promise<Backend> = (shape, params) => createCpuBackend(shape, params, cpuOptions);
  if (opts.backend === 'gpu') {
    try {
      factory = await gpuFactory();
    } catch (e) {
      fail((e as Error).message, 2);
    }
  }
  let trainer: Awaited<ReturnType<typeof createTrainer>>;
  try {
    trainer = await createTrainer(opts.config, factory);
    const pre = trainer.pretrain;
    if (pre) {
      const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
      process.stderr.write(
        `pretrained start: ${opts.config.init.steps} cross-entropy steps in ${(pre.ms / 1000).toFixed(1)} s (demonstrator success ${pct(pre.demoSuccess)}, ` +
          `final loss ${pre.demoLoss.toFixed(3)}); starting success ${pct(pre.startSuccess)} (random weights: ${pct(pre.scratchSuccess)})\n`,
      );
    }
  } catch (e) {
    if (!(e instanceof CpuMemoryError)) throw e;
    // A machine with the memory can run it: say how, in one line.
    fail(`${e.message}; or give the CPU backend more with --cpu-memory ${Math.ceil((e.bytes / 2 ** 30) * 10) / 10}`, 2);
  }
  for (let i = 0; i < opts.iters; i++) {
    let row;
    try {
      row = await trainer.step();
    } catch (e) {
      // A NaN is the run's outcome, not a crash: the rows so far are printed; one line says what happened.
      if (e instanceof NonFiniteError) fail(`the run stopped: ${e.message}`, 1);
      throw e;
    }
    process.stdout.write(JSON.stringify(row) + '\n');
    // A turn of the event loop, so a closed stdout (EPIPE) is heard before the next iteration.
    await new Promise((r) => setImmediate(r));
    if (opts.dumpBatch && opts.dumpBatch.iter === row.iter) {
      try {
        writeFileSync(opts.dumpBatch.file, JSON.stringify(await dumpBatch(trainer), null, 1));
      } catch (e) {
        fail(`--dump-batch: could not write ${opts.dumpBatch.file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, 1);
      }
      process.stderr.write(`batch of iteration ${row.iter} written to ${printable(opts.dumpBatch.file)}\n`);
    }
  }
  trainer.destroy();
}

main().catch((e: unknown) => {
  // One line for the user; the stack only when asked for (a bug report).
  if (process.env.DEBUG) process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  fail(e instanceof Error ? e.message : String(e), 1);
});
