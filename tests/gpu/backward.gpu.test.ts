/**
 * The backward kernels vs their references in kernels/model/mlp.ts: backward.wgsl headGrad (headGradCpu),
 * backward.wgsl hiddenGrad (hiddenDaCpu), backward.wgsl slotGrad (slotGradCpu), firstLayerGrad.wgsl
 * (firstLayerGradCpu, fed G rounded to f32 as the GPU stores it), each fed the reference's own
 * inputs, then the whole chain on the GPU vs backwardCpu. headGrad and slotGrad are two-pass
 * reductions over 64-row chunks (kernels/reduce.ts): row counts around the chunk size, none, and
 * past the chunk cap (more than 64 x 256 rows, where chunks grow) are covered, context tokens past
 * the vocabulary (read as PAD) too, and results must be the same bits on every run.
 * Tolerance: each output is an f32 sum over up to R rows (or V, K*H terms) of values of order 1,
 * against a float64 sum; the rounding error grows like sqrt(terms) ulps of the running sum, so
 * atol = 2e-6 * sqrt(terms) and rtol = 1e-4, terms = R (headGrad, slotGrad), V (da, dW1, db1),
 * K*H (d emb). Summing chunk by chunk only shortens the f32 running sums, so the bound needs no
 * change. Worst seen on SwiftShader (max abs error, against the atol of that case): headGrad
 * 1.1e-5 at 16385 rows (atol 2.6e-4); da 2.4e-7 (atol >= 4.5e-6); slotGrad 1.4e-5 at 16385 rows
 * (2.6e-4), 8.0e-7 at 300 rows (3.5e-5); d emb 1.3e-5 on entries of order 3 (K*H = 845: atol
 * 5.8e-5, max rel 4.6e-6); dW1, db1 3.8e-6 on entries of order 30 at 16385 rows (max rel 1.1e-7);
 * the chain 1.1e-6 (4.0e-5).
 *
 * firstLayerGrad is also checked alone in both variants (kernels/selectors.ts). The subgroup one
 * sums d emb's K·H terms in another order: each lane a serial sum of every lanes-th term, then a
 * tree over the lanes (subgroupAdd). Any order of n terms keeps the serial sum's bounds, worst
 * case (n - 1) u sum|terms| and typically sqrt(n) ulps (here shorter chains: n / lanes + log2
 * lanes), so its tolerance is the thread version's, atol 2e-6 sqrt(K·H), rtol 1e-4; dW1 and db1
 * are the same code in both, so the subgroup variant must give the thread variant's bits there.
 * The tolerance still catches one term left out: a test below drops each of a k, a j and a single
 * (k, j) term from the reference and needs it to fail.
 */
import { describe, expect, it } from 'vitest';
import { backwardCpu, firstLayerGradCpu, forwardCpu, headGradCpu, paramLayout, type MlpDims } from '../../kernels/model/mlp';
import { backwardScratchWords, firstLayerGradKernel, firstLayerGradKernels, FIRST_LAYER_EMB_PER_GROUP, headGradKernel, hiddenGradKernel, MLP_WORKGROUP_SIZE, slotGradKernel, slotTableWords } from '../../kernels/model/mlpKernels';
import { logitGradCpu, logitGradKernel } from '../../kernels/softmax/logitGrad';
import { REDUCE_MAX_CHUNKS, rowChunks } from '../../kernels/reduce';
import { createRng } from '../../workers/core/rng';
import { compareClose, expectClose, expectEqualArrays } from '../helpers/expectClose';
import { dispatch, edgeSizes, Scratch } from '../../kernels/selftest/harness';
import { withValidation } from '../helpers/validation';
import { backwardSetup } from '../../kernels/selftest/backward';
import { makeMlpCase } from '../../kernels/selftest/fixtures';
import { requireFeature, requireGpu } from '../helpers/requireGpu';
import type { KernelVariant } from '../../kernels/selectors';

const tol = (terms: number) => ({ atol: 2e-6 * Math.sqrt(Math.max(terms, 1)), rtol: 1e-4 });

type Setup = ReturnType<typeof backwardSetup>;

/** Runs the four pieces on the GPU, each from the reference's inputs. */
async function runPieces({ c, h, dz, da, G }: Setup) {
  const device = await requireGpu();
  const { dims } = c;
  const R = c.rowPos.length;
  const P = paramLayout(dims).size;
  return withValidation(device, async () => {
    const g = new Scratch(device);
    const k = {
      head: headGradKernel.create(device),
      hidden: hiddenGradKernel.create(device),
      slot: slotGradKernel.create(device),
      first: firstLayerGradKernel.create(device),
    };
    const params = g.upload(c.params);
    const hB = g.upload(h);
    const dzB = g.upload(dz);
    const grads = g.empty(P);
    const daOut = g.empty(R * dims.H);
    const Gout = g.empty(slotTableWords(dims));
    const partials = g.empty(backwardScratchWords(dims, c.L, [R]));
    const cfg = { dims, numRows: R, seqLen: c.L };
    dispatch(device, [
      [k.head, k.head.bind({ h: hB, dz: dzB, partials, grads }, cfg)],
      [k.hidden, k.hidden.bind({ params, h: hB, dz: dzB, da: daOut }, cfg)],
      [k.slot, k.slot.bind({ seq: g.upload(c.seq), rowPos: g.upload(c.rowPos), da: g.upload(da), partials, grads: Gout }, cfg)],
      [k.first, k.first.bind({ params, G: g.upload(Float32Array.from(G)), grads }, cfg)],
    ]);
    const out = {
      grads: await g.readF32(grads, P),
      da: await g.readF32(daOut, R * dims.H),
      G: await g.readF32(Gout, slotTableWords(dims)),
    };
    g.destroy();
    for (const x of Object.values(k)) x.destroy();
    return out;
  });
}

async function checkPieces(dims: MlpDims, rows: number, seed: number, pastVocab = 0) {
  const s = backwardSetup(dims, rows, seed, pastVocab);
  const got = await runPieces(s);
  const L = paramLayout(dims);
  const ref = new Float32Array(L.size);
  headGradCpu(dims, rows, s.h, s.dz, ref);
  firstLayerGradCpu(s.c.params, dims, Float64Array.from(Float32Array.from(s.G)), ref);
  const name = `V${dims.V} K${dims.K} D${dims.D} H${dims.H} R${rows}`;
  const part = (a: Float32Array, lo: number, hi: number) => a.subarray(lo, hi);
  expectClose(part(got.grads, L.w2, L.size), part(ref, L.w2, L.size), { ...tol(rows), label: `headGrad ${name}` });
  expectClose(got.da, s.da, { ...tol(dims.V), label: `hiddenGrad da ${name}` });
  expectClose(got.G, s.G, { ...tol(rows), label: `slotGrad ${name}` });
  expectClose(part(got.grads, L.emb, L.w1), part(ref, L.emb, L.w1), { ...tol(dims.K * dims.H), label: `firstLayerGrad d emb ${name}` });
  expectClose(part(got.grads, L.w1, L.w2), part(ref, L.w1, L.w2), { ...tol(dims.V), label: `firstLayerGrad dW1 db1 ${name}` });
}

describe('backward kernels match their references', () => {
  for (const rows of edgeSizes(MLP_WORKGROUP_SIZE, 300)) {
    it(`rows = ${rows}, context tokens past the vocabulary`, async () => checkPieces({ V: 13, K: 3, D: 4, H: 8 }, rows, 300 + rows, 8));
  }
  // Thread counts at the workgroup edges: chunkSum's outputs (headGrad (H+1)V, slotGrad KVH),
  // slotGrad's pass 1 per chunk (KH), firstLayerGrad's outputs (VD + KDH + H), hiddenGrad's (RH);
  // partial blocks of 4 in headGrad's pass 1 (V not a multiple of 4); H not a multiple of 64.
  const shapes: MlpDims[] = [
    { V: 9, K: 3, D: 3, H: 6 }, // headGrad 63 threads
    { V: 8, K: 1, D: 8, H: 7 }, // headGrad 64, firstLayerGrad 127
    { V: 13, K: 4, D: 5, H: 4 }, // headGrad 65
    { V: 7, K: 3, D: 2, H: 3 }, // slotGrad KVH 63
    { V: 8, K: 2, D: 2, H: 4 }, // slotGrad KVH 64
    { V: 13, K: 5, D: 2, H: 1 }, // slotGrad KVH 65, H 1
    { V: 7, K: 5, D: 2, H: 13 }, // slotGrad KH 65 per chunk
    { V: 9, K: 7, D: 1, H: 7 }, // firstLayerGrad 65
    { V: 8, K: 1, D: 1, H: 63 }, // hiddenGrad H 63
    { V: 5, K: 13, D: 5, H: 65 }, // H 65, K 13
  ];
  for (const d of shapes) {
    it(`dims V${d.V} K${d.K} D${d.D} H${d.H}`, async () => checkPieces(d, 37, d.V * d.H, 4));
  }
  // More than REDUCE_MAX_CHUNKS x 64 rows with a tiny model: chunks grow to 65 rows (253 chunks).
  it(`rows = ${64 * REDUCE_MAX_CHUNKS + 1} (past the chunk cap)`, async () => {
    const dims: MlpDims = { V: 5, K: 2, D: 2, H: 3 };
    const rows = 64 * REDUCE_MAX_CHUNKS + 1;
    expect(rowChunks(rows, (dims.H + 1) * dims.V, 64)).toEqual({ rowsPerChunk: 65, chunks: 253 });
    expect(rowChunks(rows, slotTableWords(dims), 64)).toEqual({ rowsPerChunk: 65, chunks: 253 });
    await checkPieces(dims, rows, 77, 50);
  });

  it('no rows: the reductions write zeros (overwrite), and so does firstLayerGrad from them', async () => {
    const device = await requireGpu();
    const dims: MlpDims = { V: 6, K: 2, D: 3, H: 4 };
    const c = makeMlpCase(dims, 20, createRng(3));
    const L = paramLayout(dims);
    const got = await withValidation(device, async () => {
      const g = new Scratch(device);
      const k = { head: headGradKernel.create(device), slot: slotGradKernel.create(device), first: firstLayerGradKernel.create(device) };
      const [params, seq, rowPos] = [g.upload(c.params), g.upload(c.seq), g.upload(c.rowPos)];
      const [h, dz, da] = [20 * dims.H, 20 * dims.V, 20 * dims.H].map((n) => g.upload(new Float32Array(n).fill(1)));
      const grads = g.empty(L.size);
      const G = g.empty(slotTableWords(dims));
      const partials = g.empty(16);
      const cfg = { dims, numRows: 0, rowBase: 5, seqLen: c.L };
      dispatch(device, [
        [k.head, k.head.bind({ h: h!, dz: dz!, partials, grads }, cfg)],
        [k.slot, k.slot.bind({ seq, rowPos, da: da!, partials, grads: G }, cfg)],
        [k.first, k.first.bind({ params, G, grads }, cfg)],
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
    const need = slotGradKernel.scratchWords(cfg);
    expect(need).toBe(5 * 3 * 13 * 8);
    expect(backwardScratchWords(dims, 7, [300, 100])).toBe(Math.max(need, headGradKernel.scratchWords(cfg)));
    const g = new Scratch(device);
    const slot = slotGradKernel.create(device);
    try {
      const b = g.empty(16);
      expect(() => slot.bind({ seq: b, rowPos: b, da: b, partials: g.empty(need - 1), grads: b }, cfg)).toThrow(
        /partials buffer holds \d+ bytes, this configuration needs/,
      );
    } finally {
      slot.destroy();
      g.destroy();
    }
  });

  it('the whole chain on the GPU (logitGrad to firstLayerGrad, rowBase 40) matches backwardCpu, bit-stable', async () => {
    const device = await requireGpu();
    const dims: MlpDims = { V: 11, K: 4, D: 3, H: 9 };
    const rng = createRng(4242);
    const all = makeMlpCase(dims, 140, rng, { pastVocab: 30 });
    const base = 40;
    const rows = all.rowPos.subarray(base);
    const f = forwardCpu(all.params, dims, all.seq, all.L, all.rowPos, all.grammar, 0.9);
    const dlogp = Float32Array.from({ length: 140 }, () => rng.normal());
    const dzRef = logitGradCpu(f.z.subarray(base * dims.V), dims.V, all.seq, rows, dlogp.subarray(base), 0.9);
    const ref = backwardCpu(all.params, dims, all.seq, all.L, rows, f.h.subarray(base * dims.H), dzRef);
    const P = ref.length;
    const runOnce = (reverse = false) =>
      withValidation(device, async () => {
        const g = new Scratch(device);
        const k = {
          lg: logitGradKernel.create(device),
          head: headGradKernel.create(device),
          hidden: hiddenGradKernel.create(device),
          slot: slotGradKernel.create(device),
          first: firstLayerGradKernel.create(device),
        };
        const R = 140;
        const params = g.upload(all.params);
        const seq = g.upload(all.seq);
        const rowPos = g.upload(all.rowPos);
        const h = g.upload(f.h);
        const z = g.upload(f.z);
        const dz = g.empty(R * dims.V);
        const da = g.empty(R * dims.H);
        const G = g.empty(slotTableWords(dims));
        const grads = g.empty(P);
        const cfg = { dims, numRows: R - base, rowBase: base, seqLen: all.L };
        // One scratch buffer for the two reductions, as in the backend; `reverse` runs them in the
        // other order, so each finds the other reduction's partials in it.
        const partials = g.empty(backwardScratchWords(dims, all.L, [R - base]));
        const lg = k.lg.bind({ z, seq, rowPos, dlogp: g.upload(dlogp), dz }, { ...cfg, vocab: dims.V, temperature: 0.9 });
        const hidden = k.hidden.bind({ params, h, dz, da }, cfg);
        const head = k.head.bind({ h, dz, partials, grads }, cfg);
        const slot = k.slot.bind({ seq, rowPos, da, partials, grads: G }, cfg);
        const first = k.first.bind({ params, G, grads }, cfg);
        const reductions: Parameters<typeof dispatch>[1] = [[k.head, head], [k.slot, slot]];
        dispatch(device, [[k.lg, lg], [k.hidden, hidden], ...(reverse ? reductions.reverse() : reductions), [k.first, first]]);
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

// ---- firstLayerGrad alone, both variants ----

/** firstLayerGrad's emb | W1 | b1 outputs on the GPU (the rest of the gradient is left 0). */
async function runFirstLayer(variant: KernelVariant, params: Float32Array, dims: MlpDims, G32: Float32Array): Promise<Float32Array> {
  const device = await requireGpu();
  const kernel = firstLayerGradKernels[variant];
  if (kernel.requires) requireFeature(device, kernel.requires);
  const L = paramLayout(dims);
  return withValidation(device, async () => {
    const g = new Scratch(device);
    const k = kernel.create(device);
    const grads = g.empty(L.size);
    dispatch(device, [[k, k.bind({ params: g.upload(params), G: g.upload(G32), grads }, { dims })]]);
    const out = (await g.readF32(grads, L.size)).slice(L.emb, L.w2);
    g.destroy();
    k.destroy();
    return out;
  });
}

/** Slot sums of `rows` seeded rows, f32 as the GPU stores them; tokens in `zero` get G[k, t, :] = 0. */
function firstLayerInput(dims: MlpDims, rows: number, seed: number, zero: readonly number[] = []) {
  const s = backwardSetup(dims, rows, seed);
  const G32 = Float32Array.from(s.G);
  for (const t of zero) for (let k = 0; k < dims.K; k++) G32.fill(0, (k * dims.V + t) * dims.H, (k * dims.V + t + 1) * dims.H);
  const L = paramLayout(dims);
  const ref = firstLayerGradCpu(s.c.params, dims, Float64Array.from(G32), new Float32Array(L.size)).slice(L.emb, L.w2);
  return { params: s.c.params, G32, ref };
}

async function checkFirstLayer(variant: KernelVariant, dims: MlpDims, rows: number, seed: number, zero: readonly number[] = []) {
  const { params, G32, ref } = firstLayerInput(dims, rows, seed, zero);
  const got = await runFirstLayer(variant, params, dims, G32);
  const nEmb = dims.V * dims.D;
  const name = `${variant} V${dims.V} K${dims.K} D${dims.D} H${dims.H}`;
  expectClose(got.subarray(0, nEmb), ref.subarray(0, nEmb), { ...tol(dims.K * dims.H), label: `firstLayerGrad d emb ${name}` });
  expectClose(got.subarray(nEmb), ref.subarray(nEmb), { ...tol(dims.V), label: `firstLayerGrad dW1 db1 ${name}` });
  for (const t of zero) {
    expectEqualArrays(got.subarray(t * dims.D, (t + 1) * dims.D), new Float32Array(dims.D), `d emb of token ${t}, whose G is all zero`);
  }
  return got;
}

const DEFAULT_DIMS: MlpDims = { V: 19, K: 8, D: 16, H: 64 }; // the app's default model (workers/core/config.ts)

for (const variant of ['thread', 'subgroup'] as const) describe(`firstLayerGrad matches firstLayerGradCpu (${variant})`, () => {
  it('default dims', async () => checkFirstLayer(variant, DEFAULT_DIMS, 200, 1));
  it('H = 256', async () => checkFirstLayer(variant, { ...DEFAULT_DIMS, H: 256 }, 200, 2));
  // 65 d emb outputs: not a multiple of FIRST_LAYER_EMB_PER_GROUP (2) nor of 64 threads.
  it('V·D = 65', async () => checkFirstLayer(variant, { V: 13, K: 3, D: 5, H: 8 }, 60, 3));
  it('K·H = 2, fewer terms than the lanes of a subgroup', async () => checkFirstLayer(variant, { V: 7, K: 1, D: 3, H: 2 }, 30, 4));
  it('V = 1', async () => checkFirstLayer(variant, { V: 1, K: 3, D: 4, H: 8 }, 20, 5));
  it('tokens whose G is all zero get d emb exactly 0', async () => checkFirstLayer(variant, DEFAULT_DIMS, 200, 6, [0, 7, 18]));
  it('two runs give the same bits', async () => {
    const dims = { ...DEFAULT_DIMS, H: 256 };
    const { params, G32 } = firstLayerInput(dims, 200, 7);
    expectEqualArrays(await runFirstLayer(variant, params, dims, G32), await runFirstLayer(variant, params, dims, G32), `two runs of ${variant}`);
  });
});

describe('firstLayerGrad: the variants against each other, and the tolerance', () => {
  it(`subgroup: dW1 and db1 are the thread variant's bits (${FIRST_LAYER_EMB_PER_GROUP} d emb outputs per workgroup)`, async () => {
    const dims = { ...DEFAULT_DIMS, H: 256 };
    const { params, G32 } = firstLayerInput(dims, 200, 8);
    const a = await runFirstLayer('thread', params, dims, G32);
    const b = await runFirstLayer('subgroup', params, dims, G32);
    const nEmb = dims.V * dims.D;
    expectEqualArrays(b.subarray(nEmb), a.subarray(nEmb), 'dW1, db1 of the two variants');
  });

  it("d emb's tolerance fails a reference with one k, one j or one (k, j) term left out", () => {
    for (const dims of [DEFAULT_DIMS, { ...DEFAULT_DIMS, H: 256 }]) {
      const { V, K, D, H } = dims;
      const { params, G32, ref } = firstLayerInput(dims, 200, 9);
      const w1 = paramLayout(dims).w1;
      // d emb from float64 sums without the terms `drop` names.
      const without = (drop: (k: number, j: number) => boolean) => {
        const out = new Float64Array(V * D);
        for (let t = 0; t < V; t++) {
          for (let d = 0; d < D; d++) {
            for (let k = 0; k < K; k++) {
              for (let j = 0; j < H; j++) if (!drop(k, j)) out[t * D + d]! += params[w1 + (k * D + d) * H + j]! * G32[(k * V + t) * H + j]!;
            }
          }
        }
        return out;
      };
      const emb = ref.subarray(0, V * D);
      for (const [what, drop] of [
        ['k = K - 1', (k: number) => k === K - 1],
        ['j = H - 1', (_: number, j: number) => j === H - 1],
        ['(k, j) = (3, 5)', (k: number, j: number) => k === 3 && j === 5],
      ] as const) {
        const r = compareClose(without(drop), emb, tol(K * H));
        expect(r.bad, `H ${H}: leaving out ${what} must break the tolerance`).toBeGreaterThan(0);
        console.info(`[tol] H ${H}, ${what} left out: ${r.bad} of ${V * D} d emb outside the tolerance`);
      }
    }
  });
});
