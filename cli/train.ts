/**
 * Headless training in Node with the same engine as the browser worker.
 * stdout carries only JSON lines (one per iteration); messages go to stderr.
 */
import { writeFileSync } from 'node:fs';
import type { Backend, RunShape } from '../workers/backend';
import { createCpuBackend } from '../workers/cpuBackend';
import { createTrainer } from '../workers/trainer';
import { helpText, parseArgs, UsageError, type CliOptions } from './args';

async function gpuFactory(): Promise<(shape: RunShape, params: Float32Array) => Promise<Backend>> {
  let create: (flags: string[]) => GPU;
  try {
    // Optional dependency: Dawn for Node, for machines with a real GPU (see DESIGN.md).
    const name = 'webgpu';
    ({ create } = (await import(/* @vite-ignore */ name)) as { create: (flags: string[]) => GPU });
  } catch {
    throw new UsageError('--backend gpu: needs the optional `webgpu` package (npm i webgpu) and a GPU; use --backend cpu');
  }
  const { requestGpu } = await import('../workers/gpuDevice');
  const { openGpuBackend } = await import('../workers/gpuBackend');
  const gpu = await requestGpu(create([]));
  return (shape, params) => openGpuBackend(gpu.device, shape, params, { label: gpu.label });
}

async function main(): Promise<void> {
  let opts: CliOptions;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`error: ${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
  if (opts.help) {
    process.stdout.write(helpText() + '\n');
    return;
  }
  let factory: (shape: RunShape, params: Float32Array) => Backend | Promise<Backend> = createCpuBackend;
  if (opts.backend === 'gpu') {
    try {
      factory = await gpuFactory();
    } catch (e) {
      process.stderr.write(`error: ${(e as Error).message}\n`);
      process.exit(2);
    }
  }
  const trainer = await createTrainer(opts.config, factory);
  for (let i = 0; i < opts.iters; i++) {
    const row = await trainer.step();
    process.stdout.write(JSON.stringify(row) + '\n');
    if (opts.dumpBatch && opts.dumpBatch.iter === row.iter) {
      writeFileSync(opts.dumpBatch.file, JSON.stringify(await trainer.dumpBatch(), null, 1));
      process.stderr.write(`batch of iteration ${row.iter} written to ${opts.dumpBatch.file}\n`);
    }
  }
  trainer.destroy();
}

main().catch((e: unknown) => {
  process.stderr.write(`error: ${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
