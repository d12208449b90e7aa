/**
 * forward.wgsl embedProject vs embedProjectCpu, and forward.wgsl vs forwardCpu (kernels/model/mlp.ts), the two
 * run in a row on the GPU as the backend runs them (the forward reads the table the GPU made).
 * Tolerances: proj entries are f32 sums of D products against float64 sums: atol 2e-6 sqrt(D) +
 * rtol 1e-4 (worst seen on SwiftShader: 7.5e-7 abs at D 16, atol 8e-6). h and z are f32 sums of K
 * table entries (each an f32 sum of D products) and of H products, against float64 sums throughout,
 * so they differ by a few f32 ulps of the largest partial sum: atol 2e-5 + rtol 1e-4 covers inputs
 * of order 1 (params ~ N(0, 0.25)); worst seen 3.3e-7 (h) and 2.6e-6 (z) abs, 4.8e-6 for z at
 * temperature 0.05 (atol 2e-4). Masked logits must be bit-identical (MASKED_LOGIT).
 */
import { describe, expect, it } from 'vitest';
import { embedProjectCpu, forwardCpu, MASKED_LOGIT, type MlpDims } from '../../kernels/model/mlp';
import { embedProjectKernel, forwardKernel, MLP_WORKGROUP_SIZE, slotTableWords } from '../../kernels/model/mlpKernels';
import { createRng } from '../../workers/core/rng';
import { expectClose } from '../helpers/expectClose';
import { dispatch, edgeSizes, Scratch } from '../../kernels/selftest/harness';
import { withValidation } from '../helpers/validation';
import { makeMlpCase } from '../../kernels/selftest/fixtures';
import { requireGpu } from '../helpers/requireGpu';

const TOL = { atol: 2e-5, rtol: 1e-4 };
const projTol = (D: number) => ({ atol: 2e-6 * Math.sqrt(D), rtol: 1e-4 });

interface ForwardOptions {
  rowBase?: number;
  temperature?: number;
  /** Context tokens past the vocabulary (read as PAD). */
  pastVocab?: number;
}

async function runForward(dims: MlpDims, rows: number, seed: number, o: ForwardOptions = {}) {
  const device = await requireGpu();
  const rng = createRng(seed);
  const c = makeMlpCase(dims, rows, rng, { pastVocab: o.pastVocab });
  const T = o.temperature ?? 0.8;
  const base = o.rowBase ?? 0;
  // rowPos padded with `base` junk entries in front so that rowBase/outBase are exercised.
  const rowPosPadded = new Uint32Array(base + rows);
  rowPosPadded.set(c.rowPos, base);
  return withValidation(device, async () => {
    const g = new Scratch(device);
    const project = embedProjectKernel.create(device);
    const kernel = forwardKernel.create(device);
    const params = g.upload(c.params);
    const proj = g.empty(slotTableWords(dims));
    const h = g.empty((base + rows) * dims.H);
    const z = g.empty((base + rows) * dims.V);
    const call = kernel.bind(
      { params, proj, seq: g.upload(c.seq), rowPos: g.upload(rowPosPadded), grammar: g.upload(Uint32Array.from(c.grammar)), h, z },
      { dims, seqLen: c.L, numRows: rows, rowBase: base, temperature: T },
    );
    dispatch(device, [[project, project.bind({ params, proj }, { dims })], [kernel, call]]);
    const gh = (await g.readF32(h, (base + rows) * dims.H)).subarray(base * dims.H);
    const gz = (await g.readF32(z, (base + rows) * dims.V)).subarray(base * dims.V);
    g.destroy();
    kernel.destroy();
    project.destroy();
    const ref = forwardCpu(c.params, dims, c.seq, c.L, c.rowPos, c.grammar, T);
    return { gh, gz, ref };
  });
}

async function runEmbedProject(dims: MlpDims, seed: number) {
  const device = await requireGpu();
  const c = makeMlpCase(dims, 1, createRng(seed));
  return withValidation(device, async () => {
    const g = new Scratch(device);
    const kernel = embedProjectKernel.create(device);
    const proj = g.empty(slotTableWords(dims));
    dispatch(device, [[kernel, kernel.bind({ params: g.upload(c.params), proj }, { dims })]]);
    const got = await g.readF32(proj, slotTableWords(dims));
    g.destroy();
    kernel.destroy();
    return { got, ref: embedProjectCpu(c.params, dims) };
  });
}

describe('forward.wgsl embedProject matches embedProjectCpu', () => {
  // Output counts K·V·H around the workgroup size (63, 64, 65), H past it, vocab 1, D 1 and the default model.
  const shapes: MlpDims[] = [
    { V: 7, K: 3, D: 4, H: 3 },
    { V: 8, K: 2, D: 5, H: 4 },
    { V: 13, K: 1, D: 3, H: 5 },
    { V: 5, K: 2, D: 2, H: 65 },
    { V: 1, K: 4, D: 6, H: 9 },
    { V: 11, K: 3, D: 1, H: 7 },
    { V: 19, K: 8, D: 16, H: 64 },
  ];
  for (const d of shapes) {
    it(`V${d.V} K${d.K} D${d.D} H${d.H} (${d.K * d.V * d.H} outputs)`, async () => {
      const { got, ref } = await runEmbedProject(d, d.V * d.H + d.K);
      expectClose(got, ref, { ...projTol(d.D), label: `embedProject V${d.V} K${d.K} D${d.D} H${d.H}` });
    });
  }
});

describe('forward.wgsl (after forward.wgsl embedProject) matches forwardCpu', () => {
  const dims: MlpDims = { V: 13, K: 3, D: 4, H: 8 };
  for (const rows of edgeSizes(MLP_WORKGROUP_SIZE, 300)) {
    it(`rows = ${rows}`, async () => {
      const { gh, gz, ref } = await runForward(dims, rows, 100 + rows);
      expectClose(gh, ref.h, { ...TOL, label: `forward h rows=${rows}` });
      expectClose(gz, ref.z, { ...TOL, label: `forward z rows=${rows}` });
    });
  }
  it('rows = 0 writes nothing', async () => {
    const { gh, gz } = await runForward(dims, 0, 1);
    expect([gh.length, gz.length]).toEqual([0, 0]);
  });
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
  it('context tokens past the vocabulary read as PAD', async () => {
    const { gh, gz, ref } = await runForward({ V: 11, K: 4, D: 3, H: 6 }, 30, 77, { pastVocab: 20 });
    expectClose(gh, ref.h, { ...TOL, label: 'forward h past vocab' });
    expectClose(gz, ref.z, { ...TOL, label: 'forward z past vocab' });
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
