/**
 * Self-tests of the backward kernels against their references in kernels/model/mlp.ts, each fed the
 * reference's own inputs (from tests/gpu/backward.gpu.test.ts): backward.wgsl headGrad (dW2, db2),
 * backward.wgsl hiddenGrad (da), backward.wgsl slotGrad (the slot sums G), firstLayerGrad.wgsl (d emb, dW1, db1 from
 * G rounded to f32, as the GPU stores it; also its subgroup variant, firstLayerGradSubgroup.wgsl,
 * which runs only on a device with `subgroups`). headGrad and slotGrad are two-pass reductions
 * (kernels/reduce.ts: row chunks, then chunkSum.wgsl adds them in order); the base cases have 65
 * rows, so they cross a chunk edge, and slotGrad's read context tokens past the vocabulary (PAD).
 * Tolerance: each output is an f32 sum of `terms` values of order 1 against a float64 sum; the
 * rounding error grows like sqrt(terms) ulps of the running sum, so atol = 2e-6 sqrt(terms) and
 * rtol = 1e-4, with terms = rows (headGrad, slotGrad), V (da, dW1, db1), K·H (d emb). The subgroup
 * variant adds d emb's K·H terms as a strided share per lane and then a tree over the lanes: any
 * order of n terms has the serial sum's error bound, so the same tolerance holds.
 */
import { createRng } from '../rng';
import { firstLayerGradCpu, forwardCpu, headGradCpu, hiddenDaCpu, paramLayout, slotGradCpu, type MlpDims } from '../model/mlp';
import { backwardScratchWords, firstLayerGradKernels, headGradKernel, headGradPartialKernel, hiddenGradKernel, MLP_WORKGROUP_SIZE, slotGradKernel, slotGradPartialKernel, slotTableWords } from '../model/mlpKernels';
import { chunkSumKernel } from '../reduce';
import type { KernelVariant } from '../selectors';
import { makeMlpCase } from './fixtures';
import { dispatch, withScratch, type Check, type Scratch, type SelfTestCase, type Tolerance } from './harness';

/** `terms` values summed per output; `what` names them for the reason ("rows of h · dz"). */
const tol = (terms: number, what: string): Tolerance => ({
  atol: 2e-6 * Math.sqrt(Math.max(terms, 1)),
  rtol: 1e-4,
  why: `f32 sums over ${what} against float64 sums, error ~ sqrt(terms) ulps: atol 2e-6 sqrt(terms), rtol 1e-4`,
});

type Piece = 'headGrad' | 'hiddenGrad' | 'slotGrad' | 'firstLayerGrad';
/** The pipeline each piece is listed under (pass 1 of the reductions; chunkSum is what they also use). */
const KERNELS = { headGrad: headGradPartialKernel, hiddenGrad: hiddenGradKernel, slotGrad: slotGradPartialKernel, firstLayerGrad: firstLayerGradKernels.thread };
const REDUCTIONS: ReadonlySet<Piece> = new Set(['headGrad', 'slotGrad']);

/**
 * The reference forward pass and the gradients each piece reads, for `rows` seeded rows
 * (`pastVocab` context tokens past the vocabulary). Shared with tests/gpu/backward.gpu.test.ts.
 */
export function backwardSetup(dims: MlpDims, rows: number, seed: number, pastVocab = 0) {
  const rng = createRng(seed);
  const c = makeMlpCase(dims, rows, rng, { pastVocab });
  const f = forwardCpu(c.params, dims, c.seq, c.L, c.rowPos, c.grammar, 1);
  const dz = Float32Array.from({ length: rows * dims.V }, () => rng.normal() * 0.3); // [rows, V]
  const da = hiddenDaCpu(c.params, dims, rows, f.h, dz); // [rows, H]
  const G = slotGradCpu(dims, c.seq, c.L, c.rowPos, da); // [K, V, H]
  return { c, h: f.h, dz, da, G };
}

async function runPiece(device: GPUDevice, s: Scratch, piece: Piece, dims: MlpDims, rows: number, seed: number, pastVocab: number, variant: KernelVariant): Promise<Check[]> {
  const { c, h, dz, da, G } = backwardSetup(dims, rows, seed, pastVocab);
  const L = paramLayout(dims);
  const cfg = { dims, numRows: rows, seqLen: c.L };
  const partials = s.empty(backwardScratchWords(dims, c.L, [rows]));
  if (piece === 'headGrad') {
    const grads = s.empty(L.size);
    const k = s.kernel(headGradKernel.create(device));
    dispatch(device, [[k, k.bind({ h: s.upload(h), dz: s.upload(dz), partials, grads }, cfg)]]);
    const ref = headGradCpu(dims, rows, h, dz, new Float32Array(L.size));
    const got = await s.readF32(grads, L.size);
    return [{ output: 'dW2, db2', actual: got.subarray(L.w2), expected: ref.subarray(L.w2), tol: tol(rows, 'rows of h · dz') }];
  }
  if (piece === 'hiddenGrad') {
    const k = s.kernel(hiddenGradKernel.create(device));
    const daOut = s.empty(rows * dims.H);
    dispatch(device, [[k, k.bind({ params: s.upload(c.params), h: s.upload(h), dz: s.upload(dz), da: daOut }, cfg)]]);
    return [{ output: 'da', actual: await s.readF32(daOut, rows * dims.H), expected: da, tol: tol(dims.V, 'V terms W2 · dz') }];
  }
  if (piece === 'slotGrad') {
    const k = s.kernel(slotGradKernel.create(device));
    const Gout = s.empty(slotTableWords(dims));
    dispatch(device, [[k, k.bind({ seq: s.upload(c.seq), rowPos: s.upload(c.rowPos), da: s.upload(da), partials, grads: Gout }, cfg)]]);
    return [{ output: 'G', actual: await s.readF32(Gout, slotTableWords(dims)), expected: G, tol: tol(rows, 'rows of da') }];
  }
  const G32 = Float32Array.from(G);
  const grads = s.empty(L.size);
  const k = s.kernel(firstLayerGradKernels[variant].create(device));
  dispatch(device, [[k, k.bind({ params: s.upload(c.params), G: s.upload(G32), grads }, cfg)]]);
  const ref = firstLayerGradCpu(c.params, dims, Float64Array.from(G32), new Float32Array(L.size));
  const got = await s.readF32(grads, L.size);
  return [
    { output: 'd emb', actual: got.subarray(L.emb, L.w1), expected: ref.subarray(L.emb, L.w1), tol: tol(dims.K * dims.H, 'K·H terms W1 · G') },
    { output: 'dW1, db1', actual: got.subarray(L.w1, L.w2), expected: ref.subarray(L.w1, L.w2), tol: tol(dims.V, 'V terms emb · G') },
  ];
}

/** `variant` picks firstLayerGrad's version (kernels/selectors.ts); the other pieces have one. */
function pieceCase(piece: Piece, name: string, dims: MlpDims, rows: number, seed: number, pastVocab = 0, variant: KernelVariant = 'thread'): SelfTestCase {
  return {
    kernel: piece === 'firstLayerGrad' ? firstLayerGradKernels[variant] : KERNELS[piece],
    ...(REDUCTIONS.has(piece) ? { uses: [chunkSumKernel] } : {}),
    name: `${name}: V${dims.V} K${dims.K} D${dims.D} H${dims.H}, ${rows} rows`,
    run: (device) => withScratch(device, (s) => runPiece(device, s, piece, dims, rows, seed, pastVocab, variant)),
  };
}

const BASE: MlpDims = { V: 13, K: 3, D: 4, H: 8 };
const ROWS = MLP_WORKGROUP_SIZE + 1;

export const backwardCases: SelfTestCase[] = [
  pieceCase('headGrad', 'base', BASE, ROWS, 300 + ROWS),
  pieceCase('headGrad', '(H+1)·V = 65 outputs', { V: 13, K: 4, D: 5, H: 4 }, 37, 13 * 4),
  pieceCase('hiddenGrad', 'base', BASE, ROWS, 300 + ROWS),
  pieceCase('hiddenGrad', 'H = 65', { V: 5, K: 13, D: 5, H: 65 }, 37, 5 * 65),
  pieceCase('slotGrad', 'base, context tokens past the vocabulary', BASE, ROWS, 300 + ROWS, 12),
  pieceCase('slotGrad', 'K·H = 65 columns per chunk', { V: 7, K: 5, D: 2, H: 13 }, 37, 7 * 13),
  pieceCase('firstLayerGrad', 'base', BASE, ROWS, 300 + ROWS),
  pieceCase('firstLayerGrad', 'V·D + K·D·H + H = 65 outputs', { V: 9, K: 7, D: 1, H: 7 }, 37, 9 * 7),
  pieceCase('firstLayerGrad', 'H = 65', { V: 5, K: 2, D: 3, H: 65 }, 37, 5 * 65),
  // The subgroup variant (runSelfTest skips it on a device without `subgroups`): an odd number of
  // d emb outputs (FIRST_LAYER_EMB_PER_GROUP is 2), and fewer K·H terms than lanes.
  pieceCase('firstLayerGrad', 'base', BASE, ROWS, 300 + ROWS, 0, 'subgroup'),
  pieceCase('firstLayerGrad', 'V·D = 9 d emb outputs', { V: 9, K: 7, D: 1, H: 7 }, 37, 9 * 7, 0, 'subgroup'),
  pieceCase('firstLayerGrad', 'H = 65', { V: 5, K: 2, D: 3, H: 65 }, 37, 5 * 65, 0, 'subgroup'),
  pieceCase('firstLayerGrad', 'K·H = 2 terms, fewer than a subgroup', { V: 5, K: 1, D: 3, H: 2 }, 37, 5 * 2, 0, 'subgroup'),
];
