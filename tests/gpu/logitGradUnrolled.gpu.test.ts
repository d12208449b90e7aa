/**
 * logitGradUnrolled.wgsl (the vocabulary compiled in, dz written as a workgroup's run of words;
 * kernels/mlp.ts logitGradUnrolledKernel) gives logitGrad.wgsl's gradients bit for bit: the same
 * max, sum and per-entry operations, only in another order of threads. Compared on the same inputs
 * at every vocabulary from 1 to 64, on extreme rows, with rows that have no gradient, at workgroup
 * edges and with a rowBase; the output starts as garbage so that an unwritten entry shows, and the
 * entries outside the call's rows must keep it. Its agreement with logitGradCpu (tolerance, and
 * exact zeros) is the self-test's (kernels/selftest/softmax.ts, run by selftest.gpu.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { logitGradKernel, logitGradKernelFor, logitGradKernels, logitGradUnrolledKernel } from '../../kernels/mlp';
import { UNROLLED_MAX_VOCAB } from '../../kernels/rowUnrolled';
import { createRng } from '../../workers/rng';
import { expectEqualArrays } from '../helpers/expectClose';
import { GpuScratch, runCalls, withValidation } from '../helpers/gpuBuffers';
import { logitCase, type LogitCase, type RowKind } from '../helpers/logits';
import { requireGpu } from '../helpers/requireGpu';

interface GradCase {
  name: string;
  c: LogitCase;
  /** Rows of the call; the case's rows before rowBase and after rowBase + numRows are not its. */
  numRows: number;
  rowBase: number;
  dlogp: Float32Array;
}

const GARBAGE = 7.25;
const GARBAGE_BITS = new Uint32Array(Float32Array.of(GARBAGE).buffer)[0];

function gradCase(name: string, rows: number, V: number, seed: number, opts: { kinds?: RowKind[]; zeroFrac?: number; rowBase?: number; tail?: number } = {}): GradCase {
  const rowBase = opts.rowBase ?? 0;
  const total = rowBase + rows + (opts.tail ?? 0);
  const c = logitCase(total, V, seed, opts.kinds);
  const rng = createRng(seed * 31 + V);
  const dlogp = Float32Array.from({ length: total }, () => (rng.next() < (opts.zeroFrac ?? 0.2) ? 0 : rng.normal() * 3));
  return { name, c, numRows: rows, rowBase, dlogp };
}

/** Bits of each case's whole dz buffer, one call per case. */
async function runAll(kernel: typeof logitGradKernel, cs: GradCase[]): Promise<number[][]> {
  const device = await requireGpu();
  return withValidation(device, async () => {
    const g = new GpuScratch(device);
    const k = kernel.create(device);
    const outs = cs.map((gc) => {
      const { c } = gc;
      const words = c.rowPos.length * c.V;
      const dz = g.upload(new Float32Array(words).fill(GARBAGE));
      const call = k.bind(
        { z: g.upload(c.z), seq: g.upload(c.seq), rowPos: g.upload(c.rowPos), dlogp: g.upload(gc.dlogp), dz },
        { numRows: gc.numRows, rowBase: gc.rowBase, vocab: c.V, temperature: 0.7 },
      );
      runCalls(device, [[k, call]]);
      return { dz, words };
    });
    const bits: number[][] = [];
    for (const o of outs) bits.push(Array.from(await g.readU32(o.dz, o.words)));
    g.destroy();
    k.destroy();
    return bits;
  });
}

async function expectSameBits(cs: GradCase[]) {
  const [thread, unrolled] = [await runAll(logitGradKernel, cs), await runAll(logitGradUnrolledKernel, cs)];
  cs.forEach((gc, i) => {
    expectEqualArrays(unrolled[i]!, thread[i]!, `${gc.name} (V ${gc.c.V}, rows ${gc.numRows}, rowBase ${gc.rowBase}): dz bits`);
    // Outside the call's rows nothing is written (the thread version's bits say so too; this says it plainly).
    const V = gc.c.V;
    const outside = unrolled[i]!.filter((_, e) => e < gc.rowBase * V || e >= (gc.rowBase + gc.numRows) * V);
    expect(outside.every((b) => b === GARBAGE_BITS), `${gc.name}: rows outside the call untouched`).toBe(true);
  });
}

describe("logitGradUnrolled: logitGrad.wgsl's bits", () => {
  it('at every vocabulary from 1 to 64', async () => {
    const Vs = Array.from({ length: UNROLLED_MAX_VOCAB }, (_, i) => i + 1);
    await expectSameBits(Vs.map((V) => gradCase('ordinary rows', 70, V, V)));
  });

  it('on extreme rows: logits ±1e4, one dominant, one allowed token, all equal', async () => {
    const kinds: RowKind[] = ['huge', 'dominant', 'single', 'flat'];
    await expectSameBits([
      ...kinds.map((k) => gradCase(k, 67, 12, 8, { kinds: [k] })),
      gradCase('all kinds mixed', 130, 19, 5, { kinds: ['normal', ...kinds] }),
    ]);
  });

  it('rows with no gradient get +0 (every dlogp 0, or most)', async () => {
    await expectSameBits([gradCase('every dlogp 0', 70, 5, 9, { zeroFrac: 1 }), gradCase('most dlogp 0', 200, 19, 3, { zeroFrac: 0.9 })]);
  });

  it('at workgroup edges (1, 63, 64, 65, 300 rows), with a rowBase and rows after the call', async () => {
    await expectSameBits([
      ...[1, 63, 64, 65, 300].map((rows) => gradCase(`rows ${rows}`, rows, 19, rows)),
      gradCase('rowBase 13, 40 rows after', 100, 19, 4, { rowBase: 13, tail: 40 }),
      gradCase('rowBase 64, vocab 64', 65, 64, 6, { rowBase: 64, tail: 3 }),
    ]);
  });

  it('refuses a vocabulary past its limit, naming it; the backend then runs the variant’s own', async () => {
    const device = await requireGpu();
    const k = logitGradUnrolledKernel.create(device);
    const g = new GpuScratch(device);
    const b = g.empty(64);
    const buffers = { z: b, seq: b, rowPos: b, dlogp: b, dz: b };
    expect(() => k.bind(buffers, { numRows: 1, vocab: 65, temperature: 1 })).toThrow(/logitGradUnrolled: vocabulary 65 is outside the unrolled kernels' 1\.\.64/);
    const call = k.bind(buffers, { numRows: 1, vocab: 9, temperature: 1 });
    expect(() => call.update({ numRows: 2, vocab: 8, temperature: 1 })).toThrow(/logitGradUnrolled: vocabSize 9 -> 8 needs a call of its own/);
    expect(logitGradKernelFor('subgroup', 64)).toBe(logitGradUnrolledKernel);
    expect(logitGradKernelFor('subgroup', 65)).toBe(logitGradKernels.subgroup);
    expect(logitGradKernelFor('thread', 19)).toBe(logitGradKernels.thread);
    g.destroy();
    k.destroy();
  });
});
