/** The Node part of the benchmarks: the CPU backend (TypeScript reference kernels) in Node. */
import { createCpuBackend } from '../workers/core/cpuBackend';
import { benchIterations, type ScaleSpec } from './lib/iteration';
import type { IterationRow } from './lib/types';

export async function nodeIterations(scales: ScaleSpec[], log: (m: string) => void): Promise<IterationRow[]> {
  const rows: IterationRow[] = [];
  for (const spec of scales) {
    rows.push(...(await benchIterations(spec, [{ backend: 'cpu', where: 'node', factory: createCpuBackend }], (m) => log(`node ${m}`))));
  }
  return rows;
}
