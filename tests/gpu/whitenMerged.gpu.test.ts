/**
 * Whitening in two dispatches (kernels/whiten.ts whitenMergedKernel: pass 1, then
 * whitenMergeApply.wgsl, the merge in every workgroup of rows) gives the three dispatches' results
 * bit for bit: the same tree merges the same block moments, and each row gets the same arithmetic.
 * Compared at row counts around the block (2,048) and the merged pass's workgroup (2,048 rows),
 * past 256 blocks, with a large common offset, a variance of the size of the 1e-8 added to it,
 * with no / one masked row and equal values; outputs
 * of rows past numRows stay untouched. Agreement with whitenCpu is the self-test's and
 * advantageFamily.gpu.test.ts's.
 */
import { describe, expect, it } from 'vitest';
import {
  WHITEN_MERGED_APPLY_ROWS,
  WHITEN_MIN_BLOCK,
  whitenBlocks,
  whitenKernel,
  whitenKernelFor,
  whitenMergedKernel,
  whitenScratchWords,
} from '../../kernels/whiten';
import { createRng } from '../../workers/rng';
import { expectEqualArrays } from '../helpers/expectClose';
import { GpuScratch, runCalls, withValidation } from '../helpers/gpuBuffers';
import { requireGpu } from '../helpers/requireGpu';

type Whiten = typeof whitenKernel;

/** Bits of adv after `kernel` whitens its first numRows rows in place. */
async function run(kernel: Whiten, adv: Float32Array, mask: Float32Array, numRows = adv.length): Promise<number[]> {
  const device = await requireGpu();
  return withValidation(device, async () => {
    const g = new GpuScratch(device);
    const k = kernel.create(device);
    const buf = g.upload(adv);
    // Garbage in the scratch: every word either version reads, it wrote first.
    const partials = g.upload(new Float32Array(whitenScratchWords(numRows)).fill(123.5));
    runCalls(device, [[k, k.bind({ mask: g.upload(mask), adv: buf, partials }, { numRows })]]);
    const out = await g.readF32(buf, adv.length);
    g.destroy();
    k.destroy();
    return Array.from(new Uint32Array(out.buffer, out.byteOffset, out.length));
  });
}

async function expectSameBits(name: string, adv: Float32Array, mask: Float32Array, numRows = adv.length) {
  const three = await run(whitenKernel, adv, mask, numRows);
  const two = await run(whitenMergedKernel, adv, mask, numRows);
  expectEqualArrays(two, three, `${name} (bits)`);
}

function rows(R: number, scale: number, offset: number, p = 0.8) {
  const rng = createRng(R * 7 + scale);
  const adv = Float32Array.from({ length: R }, () => scale * rng.normal() + offset);
  const mask = Float32Array.from({ length: R }, () => (rng.next() < p ? 1 : 0));
  return { adv, mask };
}

describe('whiten in two dispatches: the three dispatches\' bits', () => {
  const B = WHITEN_MIN_BLOCK;
  const W = WHITEN_MERGED_APPLY_ROWS;
  const grown = 256 * B;
  for (const [R, scale, offset] of [
    [1, 1, 0],
    [2, 1, 0],
    [257, 1, 0],
    [W - 1, 1, 0],
    [W, 3, 1],
    [W + 1, 1, 0],
    [3 * B + 5, 2, 0.5],
    [73_728, 1, 100],
    [300_000, 1, 1e6],
    // A spread of 1e-4: the variance is of the size of whitening's 1e-8.
    [5000, 1e-4, 0.5],
    [grown + 1, 2, -3],
  ] as const) {
    it(`rows ${R} (${whitenBlocks(R).blocks} blocks, ${Math.ceil(R / W)} workgroups of rows), values ${scale} N(0,1) + ${offset}`, async () => {
      const { adv, mask } = rows(R, scale, offset);
      await expectSameBits(`rows ${R}`, adv, mask);
    });
  }

  it('no row masked in, one (in a later block), equal values; rows past numRows untouched', async () => {
    const R = 3 * B + 9;
    await expectSameBits('none', Float32Array.from({ length: R }, (_, i) => i), new Float32Array(R));
    const one = new Float32Array(R);
    one[2 * B + 7] = 1;
    await expectSameBits('one', Float32Array.from({ length: R }, (_, i) => i - 1e3), one);
    await expectSameBits('equal', new Float32Array(R).fill(-1e6 / 3), Float32Array.from({ length: R }, (_, i) => (i % 7 === 3 ? 0 : 1)));
    const { adv, mask } = rows(W + 50, 1, 0);
    const two = await run(whitenMergedKernel, adv, mask, W + 10);
    expectEqualArrays(two.slice(W + 10), new Uint32Array(adv.buffer, 4 * (W + 10)), 'rows past numRows (bits)');
    await expectSameBits('first W + 10 rows', adv, mask, W + 10);
  });

  it('the backend runs two dispatches in the subgroup variant, three in the thread one', () => {
    expect(whitenKernelFor('subgroup')).toBe(whitenMergedKernel);
    expect(whitenKernelFor('thread')).toBe(whitenKernel);
    expect([whitenMergedKernel.dispatches, whitenKernel.dispatches]).toEqual([2, 3]);
  });

  it('refuses a scratch buffer smaller than whitenScratchWords', async () => {
    const device = await requireGpu();
    const g = new GpuScratch(device);
    const k = whitenMergedKernel.create(device);
    const R = 3 * B;
    expect(() => k.bind({ mask: g.empty(R), adv: g.empty(R), partials: g.empty(whitenScratchWords(R) - 4) }, { numRows: R })).toThrow(
      /whitenMerged: the partials buffer holds .* \(whitenScratchWords\)/,
    );
    g.destroy();
    k.destroy();
  });
});
