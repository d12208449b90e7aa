/**
 * The backward kernels vs their references in kernels/mlp.ts: headGrad.wgsl (headGradCpu),
 * hiddenGrad.wgsl (hiddenGradCpu), inputGrad.wgsl (inputGradCpu), embedGrad.wgsl (embedGradCpu),
 * each fed the reference's own inputs, then the whole chain on the GPU vs backwardCpu.
 * headGrad, inputGrad and embedGrad are two-pass reductions over row chunks (kernels/reduce.ts):
 * row counts around the chunk sizes (64 rows; 16 for embedGrad) and past the chunk cap (more than
 * 64 x 256 rows, where chunks grow) are covered, and results must be the same bits on every run.
 * Tolerance: each output is an f32 sum over up to R rows (or H, V terms) of products of order 1,
 * against a float64 sum; the rounding error grows like sqrt(terms) ulps of the running sum, so
 * atol = 2e-6 * sqrt(terms) (terms ~ R * K for the embedding gather) and rtol = 1e-4. Summing
 * chunk by chunk only shortens the f32 running sums, so the bound needs no change.
 */
import { describe, expect, it } from 'vitest';
import {
  backwardCpu,
  backwardScratchWords,
  embedGradCpu,
  embedGradKernel,
  forwardCpu,
  headGradCpu,
  headGradKernel,
  hiddenGradCpu,
  hiddenGradKernel,
  inputGradCpu,
  inputGradKernel,
  logitGradKernel,
  MLP_WORKGROUP_SIZE,
  paramLayout,
  type MlpDims,
} from '../../kernels/mlp';
import { REDUCE_MAX_CHUNKS, rowChunks } from '../../kernels/reduce';
import { createRng } from '../../workers/rng';
import { expectClose, expectEqualArrays } from '../helpers/expectClose';
import { GpuScratch, runCalls, withValidation } from '../helpers/gpuBuffers';
import { edgeSizes, makeMlpCase, type MlpCase } from '../helpers/mlpFixture';
import { requireGpu } from '../helpers/requireGpu';

const tol = (terms: number) => ({ atol: 2e-6 * Math.sqrt(Math.max(terms, 1)), rtol: 1e-4 });

function setup(dims: MlpDims, rows: number, seed: number) {
  const rng = createRng(seed);
  const c = makeMlpCase(dims, rows, rng);
  const f = forwardCpu(c.params, dims, c.seq, c.L, c.rowPos, c.grammar, 1);
  const dz = Float32Array.from({ length: rows * dims.V }, () => rng.normal() * 0.3);
  const { da, dx } = hiddenGradCpu(c.params, dims, rows, f.h, dz);
  return { c, h: f.h, dz, da, dx };
}

/** Runs the four pieces on the GPU, each from the reference's inputs. */
async function runPieces(c: MlpCase, h: Float32Array, dz: Float32Array, da: Float32Array, dx: Float32Array) {
  const device = await requireGpu();
  const { dims } = c;
  const R = c.rowPos.length;
  const P = paramLayout(dims).size;
  return withValidation(device, async () => {
    const g = new GpuScratch(device);
    const [head, hidden, input, embed] = [
      headGradKernel.create(device),
      hiddenGradKernel.create(device),
      inputGradKernel.create(device),
      embedGradKernel.create(device),
    ] as const;
    const ks = [head, hidden, input, embed];
    const params = g.upload(c.params);
    const seq = g.upload(c.seq);
    const rowPos = g.upload(c.rowPos);
    const hB = g.upload(h);
    const dzB = g.upload(dz);
    const daIn = g.upload(da);
    const dxIn = g.upload(dx);
    const grads = g.empty(P);
    const daOut = g.empty(R * dims.H);
    const dxOut = g.empty(R * dims.K * dims.D);
    const partials = g.empty(backwardScratchWords(dims, c.L, [R]));
    const cfg = { dims, numRows: R, seqLen: c.L };
    runCalls(device, [
      [head, head.bind({ h: hB, dz: dzB, partials, grads }, cfg)],
      [hidden, hidden.bind({ params, h: hB, dz: dzB, da: daOut, dx: dxOut }, cfg)],
      [input, input.bind({ params, seq, rowPos, da: daIn, partials, grads }, cfg)],
      [embed, embed.bind({ seq, rowPos, dx: dxIn, partials, grads }, cfg)],
    ]);
    const out = {
      grads: await g.readF32(grads, P),
      da: await g.readF32(daOut, R * dims.H),
      dx: await g.readF32(dxOut, R * dims.K * dims.D),
    };
    g.destroy();
    for (const k of ks) k.destroy();
    return out;
  });
}

async function checkPieces(dims: MlpDims, rows: number, seed: number) {
  const { c, h, dz, da, dx } = setup(dims, rows, seed);
  const got = await runPieces(c, h, dz, da, dx);
  const L = paramLayout(dims);
  const ref = new Float32Array(L.size);
  headGradCpu(dims, rows, h, dz, ref);
  inputGradCpu(c.params, dims, c.seq, c.L, c.rowPos, da, ref);
  embedGradCpu(dims, c.seq, c.L, c.rowPos, dx, ref);
  const name = `V${dims.V} K${dims.K} D${dims.D} H${dims.H} R${rows}`;
  const part = (a: Float32Array, lo: number, hi: number) => a.subarray(lo, hi);
  expectClose(part(got.grads, L.w2, L.size), part(ref, L.w2, L.size), { ...tol(rows), label: `headGrad ${name}` });
  expectClose(got.da, da, { ...tol(dims.V), label: `hiddenGrad da ${name}` });
  expectClose(got.dx, dx, { ...tol(dims.H), label: `hiddenGrad dx ${name}` });
  expectClose(part(got.grads, L.w1, L.w2), part(ref, L.w1, L.w2), { ...tol(rows), label: `inputGrad ${name}` });
  expectClose(part(got.grads, L.emb, L.w1), part(ref, L.emb, L.w1), { ...tol(rows * dims.K), label: `embedGrad ${name}` });
}

describe('backward kernels match their references', () => {
  for (const rows of edgeSizes(MLP_WORKGROUP_SIZE, 300)) {
    it(`rows = ${rows}`, async () => checkPieces({ V: 13, K: 3, D: 4, H: 8 }, rows, 300 + rows));
  }
  // Output counts at the workgroup edges (chunkSum threads): headGrad (H+1)V, inputGrad (KD+1)H,
  // embedGrad VD; partial blocks of 4 (V, H not multiples of 4; H = 1) in headGrad's and inputGrad's
  // pass 1; and the strided hidden / input loops of hiddenGrad (H, KD = 63, 64, 65).
  const shapes: MlpDims[] = [
    { V: 9, K: 3, D: 3, H: 6 }, // headGrad 63 threads
    { V: 8, K: 1, D: 8, H: 7 }, // headGrad 64, embedGrad 64, inputGrad 63
    { V: 13, K: 4, D: 5, H: 4 }, // headGrad 65, embedGrad 65
    { V: 8, K: 1, D: 1, H: 63 }, // hiddenGrad H 63
    { V: 64, K: 2, D: 32, H: 1 }, // hiddenGrad KD 64, inputGrad 65
    { V: 5, K: 13, D: 5, H: 65 }, // hiddenGrad H 65 and KD 65
  ];
  for (const d of shapes) {
    it(`dims V${d.V} K${d.K} D${d.D} H${d.H}`, async () => checkPieces(d, 37, d.V * d.H));
  }
  // Chunk edges of the two-pass reductions: embedGrad's 16-row chunks (15, 16, 17, 33 rows) and,
  // with a tiny model, more than REDUCE_MAX_CHUNKS x 64 rows, where chunks grow to 65 rows (253 chunks).
  for (const rows of [15, 16, 17, 33]) {
    it(`rows = ${rows} (embedGrad chunk edges)`, async () => checkPieces({ V: 7, K: 3, D: 5, H: 4 }, rows, 900 + rows));
  }
  it(`rows = ${64 * REDUCE_MAX_CHUNKS + 1} (past the chunk cap)`, async () => {
    const dims: MlpDims = { V: 5, K: 2, D: 2, H: 3 };
    const rows = 64 * REDUCE_MAX_CHUNKS + 1;
    expect(rowChunks(rows, (dims.H + 1) * dims.V, 64)).toEqual({ rowsPerChunk: 65, chunks: 253 });
    await checkPieces(dims, rows, 77);
  });

  it('no rows: the reductions write zeros (overwrite, as before)', async () => {
    const device = await requireGpu();
    const dims: MlpDims = { V: 6, K: 2, D: 3, H: 4 };
    const c = makeMlpCase(dims, 20, createRng(3));
    const L = paramLayout(dims);
    const got = await withValidation(device, async () => {
      const g = new GpuScratch(device);
      const k = { head: headGradKernel.create(device), input: inputGradKernel.create(device), embed: embedGradKernel.create(device) };
      const [params, seq, rowPos] = [g.upload(c.params), g.upload(c.seq), g.upload(c.rowPos)];
      const [h, dz, da, dx] = [20 * dims.H, 20 * dims.V, 20 * dims.H, 20 * dims.K * dims.D].map((n) => g.upload(new Float32Array(n).fill(1)));
      const grads = g.empty(L.size);
      const partials = g.empty(16);
      const cfg = { dims, numRows: 0, rowBase: 5, seqLen: c.L };
      runCalls(device, [
        [k.head, k.head.bind({ h: h!, dz: dz!, partials, grads }, cfg)],
        [k.input, k.input.bind({ params, seq, rowPos, da: da!, partials, grads }, cfg)],
        [k.embed, k.embed.bind({ seq, rowPos, dx: dx!, partials, grads }, cfg)],
      ]);
      const out = await g.readF32(grads, L.size);
      g.destroy();
      for (const x of Object.values(k)) x.destroy();
      return out;
    });
    expectEqualArrays(got, new Float32Array(L.size), 'grads with no rows');
  });

  it('refuses a partials buffer smaller than the configuration needs', async () => {
    const device = await requireGpu();
    const dims: MlpDims = { V: 13, K: 3, D: 4, H: 8 };
    const cfg = { dims, numRows: 300, seqLen: 7 };
    const need = headGradKernel.scratchWords(cfg);
    expect(need).toBe(5 * 9 * 13);
    expect(backwardScratchWords(dims, 7, [300, 100])).toBe(Math.max(need, inputGradKernel.scratchWords(cfg), embedGradKernel.scratchWords(cfg)));
    const g = new GpuScratch(device);
    const head = headGradKernel.create(device);
    try {
      const b = g.empty(16);
      expect(() => head.bind({ h: b, dz: b, partials: g.empty(need - 1), grads: b }, cfg)).toThrow(/partials buffer holds \d+ bytes, this configuration needs/);
    } finally {
      head.destroy();
      g.destroy();
    }
  });

  it('the whole chain on the GPU (logitGrad to embedGrad, rowBase 40) matches backwardCpu, bit-stable', async () => {
    const device = await requireGpu();
    const dims: MlpDims = { V: 11, K: 4, D: 3, H: 9 };
    const rng = createRng(4242);
    const all = makeMlpCase(dims, 140, rng);
    const base = 40;
    const rows = all.rowPos.subarray(base);
    const f = forwardCpu(all.params, dims, all.seq, all.L, all.rowPos, all.grammar, 0.9);
    const dlogp = Float32Array.from({ length: 140 }, () => rng.normal());
    const { logitGradCpu } = await import('../../kernels/mlp');
    const dzRef = logitGradCpu(f.z.subarray(base * dims.V), dims.V, all.seq, rows, dlogp.subarray(base), 0.9);
    const ref = backwardCpu(all.params, dims, all.seq, all.L, rows, f.h.subarray(base * dims.H), dzRef);
    const P = ref.length;
    const runOnce = (reverse = false) =>
      withValidation(device, async () => {
        const g = new GpuScratch(device);
        const k = {
          lg: logitGradKernel.create(device),
          head: headGradKernel.create(device),
          hidden: hiddenGradKernel.create(device),
          input: inputGradKernel.create(device),
          embed: embedGradKernel.create(device),
        };
        const R = 140;
        const params = g.upload(all.params);
        const seq = g.upload(all.seq);
        const rowPos = g.upload(all.rowPos);
        const h = g.upload(f.h);
        const z = g.upload(f.z);
        const dz = g.empty(R * dims.V);
        const da = g.empty(R * dims.H);
        const dx = g.empty(R * dims.K * dims.D);
        const grads = g.empty(P);
        const cfg = { dims, numRows: R - base, rowBase: base, seqLen: all.L };
        // One scratch buffer for the three reductions, as in the backend; `reverse` runs them in
        // the other order, so each finds another reduction's partials in it.
        const partials = g.empty(backwardScratchWords(dims, all.L, [R - base]));
        const lg = k.lg.bind({ z, seq, rowPos, dlogp: g.upload(dlogp), dz }, { ...cfg, vocab: dims.V, temperature: 0.9 });
        const hidden = k.hidden.bind({ params, h, dz, da, dx }, cfg);
        const head = k.head.bind({ h, dz, partials, grads }, cfg);
        const input = k.input.bind({ params, seq, rowPos, da, partials, grads }, cfg);
        const embed = k.embed.bind({ seq, rowPos, dx, partials, grads }, cfg);
        const reductions: Parameters<typeof runCalls>[1] = [[k.head, head], [k.input, input], [k.embed, embed]];
        runCalls(device, [[k.lg, lg], [k.hidden, hidden], ...(reverse ? reductions.reverse() : reductions)]);
        const out = await g.readF32(grads, P);
        g.destroy();
        for (const x of Object.values(k)) x.destroy();
        return out;
      });
    const a = await runOnce();
    const b = await runOnce();
    const c = await runOnce(true);
    expectClose(a, ref, { ...tol(100 * dims.K), label: 'backward chain' });
    expectEqualArrays(a, b, 'two runs of the backward chain');
    expectEqualArrays(a, c, 'the reductions in the other order on the shared scratch');
    expect(a.some((x) => x !== 0)).toBe(true);
  });
});
