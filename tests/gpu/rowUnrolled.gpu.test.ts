/**
 * The unrolled row kernels (kernels/softmax/rowUnrolled.ts) give the thread versions' results bit for bit:
 * they run the same per-row operations on the row held in registers. Compared on the same inputs
 * at every vocabulary from 1 to 64 (each compiles a pipeline of its own; one submit per case),
 * at workgroup edges (1, 63, 64, 65 and 300 rows), with row offsets (rowBase, zBase) and on the
 * extreme rows. Their agreement
 * with the CPU references is the self-test's (kernels/selftest/softmax.ts); this is the stronger
 * claim its tolerances cannot make.
 */
import { describe, expect, it } from 'vitest';
import { UNROLLED_MAX_VOCAB } from '../../kernels/softmax/rowUnrolled';
import { sampleKernel, sampleUnrolledKernel } from '../../kernels/softmax/sample';
import { tokenStatsKernel, tokenStatsUnrolledKernel } from '../../kernels/softmax/tokenStats';
import { dispatch, Scratch } from '../../kernels/selftest/harness';
import { withValidation } from '../helpers/validation';
import { logitCase, type LogitCase } from '../../kernels/selftest/fixtures';
import { requireGpu } from '../helpers/requireGpu';

const KERNELS = {
  thread: { sample: sampleKernel, stats: tokenStatsKernel },
  unrolled: { sample: sampleUnrolledKernel, stats: tokenStatsUnrolledKernel },
};
type Layout = keyof typeof KERNELS;
const bits = (x: Float32Array | Uint32Array) => Array.from(new Uint32Array(x.buffer, x.byteOffset, x.length));

/** Rows `base` .. of each case, one call of each kernel per case. */
async function runAll(layout: Layout, cs: LogitCase[], base: number) {
  const device = await requireGpu();
  return withValidation(device, async () => {
    const g = new Scratch(device);
    const ks = { sample: KERNELS[layout].sample.create(device), stats: KERNELS[layout].stats.create(device) };
    const bufs = cs.map((c) => {
      const n = c.rowPos.length;
      const rows = n - base;
      const z = g.upload(c.z);
      const rowPos = g.upload(c.rowPos);
      const b = { rows, n, seq: g.upload(new Uint32Array(c.seq.length)), sampled: g.upload(new Uint32Array(rows)), logp: g.empty(n), entropy: g.empty(n), sumP2: g.empty(n) };
      dispatch(device, [
        [ks.sample, ks.sample.bind({ z, rowPos, seq: b.seq, sampled: b.sampled }, { vocab: c.V, numRows: rows, rowBase: base, zBase: base, seed: 99, iter: 3 })],
        [ks.stats, ks.stats.bind({ z, seq: g.upload(c.seq), rowPos, logp: b.logp, entropy: b.entropy, sumP2: b.sumP2 }, { vocab: c.V, numRows: rows, rowBase: base })],
      ]);
      return { b };
    });
    const out = [];
    for (const { b } of bufs) {
      out.push({
        sampled: await g.readU32(b.sampled, b.rows),
        logp: await g.readF32(b.logp, b.n),
        entropy: await g.readF32(b.entropy, b.n),
        sumP2: await g.readF32(b.sumP2, b.n),
      });
    }
    g.destroy();
    ks.sample.destroy();
    ks.stats.destroy();
    return out;
  });
}

async function expectSameBits(name: string, cs: LogitCase[], base = 0) {
  const [thread, unrolled] = [await runAll('thread', cs, base), await runAll('unrolled', cs, base)];
  cs.forEach((c, i) => {
    for (const key of ['sampled', 'logp', 'entropy', 'sumP2'] as const) {
      expect(bits(unrolled[i]![key]), `${key}: ${name}, vocab ${c.V}`).toEqual(bits(thread[i]![key]));
    }
  });
}

describe('unrolled row kernels: the thread versions\' bits', () => {
  it('at every vocabulary from 1 to 64', async () => {
    const vocabs = Array.from({ length: UNROLLED_MAX_VOCAB }, (_, i) => i + 1);
    await expectSameBits('100 rows', vocabs.map((V) => logitCase(100, V, V + 3)));
  });

  it('at workgroup edges (19 logits)', async () => {
    await expectSameBits('rows', [1, 63, 64, 65, 300].map((rows) => logitCase(rows, 19, rows)));
  });

  it('with a row offset', async () => {
    await expectSameBits('rows 70.. of 150', [logitCase(150, 23, 5), logitCase(150, 64, 6)], 70);
  });

  it('on extreme rows (±1e4, one dominant, one allowed, flat)', async () => {
    await expectSameBits('extreme', [16, 19, 64].map((V) => logitCase(96, V, V, ['huge', 'dominant', 'single', 'flat'])));
  });

  it('refuses a vocabulary past its limit, naming the limit', async () => {
    const device = await requireGpu();
    const k = tokenStatsUnrolledKernel.create(device);
    const g = new Scratch(device);
    const b = g.empty(64);
    expect(() => k.bind({ z: b, seq: b, rowPos: b, logp: b, entropy: b, sumP2: b }, { vocab: 65, numRows: 1 })).toThrow(
      /tokenStatsUnrolled: vocabulary 65 is outside the unrolled kernels' 1\.\.64/,
    );
    g.destroy();
    k.destroy();
  });

  it('keeps a call to the vocabulary its pipeline was compiled for', async () => {
    const device = await requireGpu();
    const k = sampleUnrolledKernel.create(device);
    const g = new Scratch(device);
    const b = g.empty(64);
    const call = k.bind({ z: b, rowPos: b, seq: b, sampled: b }, { vocab: 19, numRows: 1, seed: 1, iter: 0 });
    expect(() => call.update({ vocab: 19, numRows: 2, seed: 1, iter: 1 })).not.toThrow();
    expect(() => call.update({ vocab: 20, numRows: 2, seed: 1, iter: 1 })).toThrow(/sampleUnrolled: vocabSize 19 -> 20 needs a call of its own/);
    g.destroy();
    k.destroy();
  });
});
