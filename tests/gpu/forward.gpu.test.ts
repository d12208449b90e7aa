/**
 * forward.wgsl vs forwardCpu (kernels/mlp.ts). Tolerances: h and z are f32 sums of K*D and H
 * products on the GPU against float64 sums in the reference, so they differ by a few f32 ulps of
 * the largest partial sum: atol 2e-5 + rtol 1e-4 covers inputs of order 1 (params ~ N(0, 0.25)).
 * Masked logits must be bit-identical (MASKED_LOGIT).
 */
import { describe, expect, it } from 'vitest';
import { forwardCpu, forwardKernel, MASKED_LOGIT, MLP_WORKGROUP_SIZE, type MlpDims } from '../../kernels/mlp';
import { createRng } from '../../workers/rng';
import { expectClose } from '../helpers/expectClose';
import { GpuScratch, runCalls, withValidation } from '../helpers/gpuBuffers';
import { edgeSizes, makeMlpCase } from '../helpers/mlpFixture';
import { requireGpu } from '../helpers/requireGpu';

const TOL = { atol: 2e-5, rtol: 1e-4 };

async function runForward(dims: MlpDims, rows: number, seed: number, o: { rowBase?: number; temperature?: number } = {}) {
  const device = await requireGpu();
  const rng = createRng(seed);
  const c = makeMlpCase(dims, rows, rng);
  const T = o.temperature ?? 0.8;
  const base = o.rowBase ?? 0;
  // rowPos padded with `base` junk entries in front so that rowBase/outBase are exercised.
  const rowPosPadded = new Uint32Array(base + rows);
  rowPosPadded.set(c.rowPos, base);
  return withValidation(device, async () => {
    const g = new GpuScratch(device);
    const kernel = forwardKernel.create(device);
    const h = g.empty((base + rows) * dims.H);
    const z = g.empty((base + rows) * dims.V);
    const call = kernel.bind(
      { params: g.upload(c.params), seq: g.upload(c.seq), rowPos: g.upload(rowPosPadded), grammar: g.upload(Uint32Array.from(c.grammar)), h, z },
      { dims, seqLen: c.L, numRows: rows, rowBase: base, temperature: T },
    );
    runCalls(device, [[kernel, call]]);
    const gh = (await g.readF32(h, (base + rows) * dims.H)).subarray(base * dims.H);
    const gz = (await g.readF32(z, (base + rows) * dims.V)).subarray(base * dims.V);
    g.destroy();
    kernel.destroy();
    const ref = forwardCpu(c.params, dims, c.seq, c.L, c.rowPos, c.grammar, T);
    return { gh, gz, ref };
  });
}

describe('forward.wgsl matches forwardCpu', () => {
  const dims: MlpDims = { V: 13, K: 3, D: 4, H: 8 };
  for (const rows of edgeSizes(MLP_WORKGROUP_SIZE, 300)) {
    it(`rows = ${rows}`, async () => {
      const { gh, gz, ref } = await runForward(dims, rows, 100 + rows);
      expectClose(gh, ref.h, { ...TOL, label: `forward h rows=${rows}` });
      expectClose(gz, ref.z, { ...TOL, label: `forward z rows=${rows}` });
    });
  }
  // The per-row workgroup strides over hidden units and vocabulary: sizes around the workgroup.
  for (const H of [1, 63, 64, 65]) {
    it(`hidden = ${H}, vocab = ${H + 2}`, async () => {
      const d: MlpDims = { V: H + 2, K: 2, D: 3, H };
      const { gh, gz, ref } = await runForward(d, 17, 7 * H);
      expectClose(gh, ref.h, { ...TOL, label: `forward h H=${H}` });
      expectClose(gz, ref.z, { ...TOL, label: `forward z H=${H}` });
    });
  }
  it('context longer than the sequence so far reads PAD, vocab 1, rowBase offset', async () => {
    const { gh, gz, ref } = await runForward({ V: 1, K: 9, D: 2, H: 5 }, 12, 5, { rowBase: 7 });
    expectClose(gh, ref.h, { ...TOL, label: 'forward h K>L' });
    expectClose(gz, ref.z, { ...TOL, label: 'forward z K>L' });
  });
  it('writes MASKED_LOGIT bit for bit where the grammar forbids a token', async () => {
    const { gz, ref } = await runForward({ V: 11, K: 2, D: 2, H: 4 }, 40, 9, { temperature: 0.05 });
    let masked = 0;
    for (let i = 0; i < gz.length; i++) {
      if (ref.z[i] === MASKED_LOGIT) {
        masked++;
        expect(gz[i]).toBe(MASKED_LOGIT);
      }
    }
    expect(masked).toBeGreaterThan(0);
    expectClose(gz, ref.z, { atol: 2e-4, rtol: 1e-4, label: 'forward z T=0.05' });
  });
});
