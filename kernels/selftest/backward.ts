/**
 * Self-tests of the backward kernels against their references in kernels/mlp.ts, each fed the
 * reference's own inputs (from tests/gpu/backward.gpu.test.ts): headGrad.wgsl (dW2, db2),
 * hiddenGrad.wgsl (da, dx), inputGrad.wgsl (dW1, db1), embedGrad.wgsl (d emb). headGrad, inputGrad
 * and embedGrad are two-pass reductions (kernels/reduce.ts: row chunks, then chunkSum.wgsl adds
 * them in order); the base cases have 65 rows, so they cross a chunk edge.
 * Tolerance: each output is an f32 sum of `terms` products of order 1 against a float64 sum; the
 * rounding error grows like sqrt(terms) ulps of the running sum, so atol = 2e-6 sqrt(terms) and
 * rtol = 1e-4, with terms = rows (headGrad, inputGrad), V (da), H (dx), rows * K (embedGrad).
 */
import { createRng } from '../../workers/rng';
import {
  backwardScratchWords,
  embedGradCpu,
  embedGradKernel,
  embedGradPartialKernel,
  forwardCpu,
  headGradCpu,
  headGradKernel,
  headGradPartialKernel,
  hiddenGradCpu,
  hiddenGradKernel,
  inputGradCpu,
  inputGradKernel,
  inputGradPartialKernel,
  MLP_WORKGROUP_SIZE,
  paramLayout,
  type MlpDims,
} from '../mlp';
import { chunkSumKernel } from '../reduce';
import { makeMlpCase } from './fixtures';
import { dispatch, withScratch, type Check, type Scratch, type SelfTestCase, type Tolerance } from './harness';

/** `terms` products summed per output; `what` names them for the reason ("rows of h · dz"). */
const tol = (terms: number, what: string): Tolerance => ({
  atol: 2e-6 * Math.sqrt(Math.max(terms, 1)),
  rtol: 1e-4,
  why: `f32 sums over ${what} against float64 sums, error ~ sqrt(terms) ulps: atol 2e-6 sqrt(terms), rtol 1e-4`,
});

type Piece = 'headGrad' | 'hiddenGrad' | 'inputGrad' | 'embedGrad';
/** The pipeline each piece is listed under (pass 1 of the reductions; chunkSum is what they also use). */
const KERNELS = { headGrad: headGradPartialKernel, hiddenGrad: hiddenGradKernel, inputGrad: inputGradPartialKernel, embedGrad: embedGradPartialKernel };

/** The reference forward pass and the gradients each piece reads, for `rows` seeded rows. */
function setup(dims: MlpDims, rows: number, seed: number) {
  const rng = createRng(seed);
  const c = makeMlpCase(dims, rows, rng);
  const f = forwardCpu(c.params, dims, c.seq, c.L, c.rowPos, c.grammar, 1);
  const dz = Float32Array.from({ length: rows * dims.V }, () => rng.normal() * 0.3); // [rows, V]
  const { da, dx } = hiddenGradCpu(c.params, dims, rows, f.h, dz); // [rows, H], [rows, K*D]
  return { c, h: f.h, dz, da, dx };
}

async function runPiece(device: GPUDevice, s: Scratch, piece: Piece, dims: MlpDims, rows: number, seed: number): Promise<Check[]> {
  const { c, h, dz, da, dx } = setup(dims, rows, seed);
  const L = paramLayout(dims);
  const cfg = { dims, numRows: rows, seqLen: c.L };
  const grads = s.empty(L.size);
  const partials = s.empty(backwardScratchWords(dims, c.L, [rows]));
  const ref = new Float32Array(L.size);
  if (piece === 'headGrad') {
    const k = s.kernel(headGradKernel.create(device));
    dispatch(device, [[k, k.bind({ h: s.upload(h), dz: s.upload(dz), partials, grads }, cfg)]]);
    headGradCpu(dims, rows, h, dz, ref);
    const got = await s.readF32(grads, L.size);
    return [{ output: 'dW2, db2', actual: got.subarray(L.w2), expected: ref.subarray(L.w2), tol: tol(rows, 'rows of h · dz') }];
  }
  if (piece === 'hiddenGrad') {
    const k = s.kernel(hiddenGradKernel.create(device));
    const daOut = s.empty(rows * dims.H);
    const dxOut = s.empty(rows * dims.K * dims.D);
    dispatch(device, [[k, k.bind({ params: s.upload(c.params), h: s.upload(h), dz: s.upload(dz), da: daOut, dx: dxOut }, cfg)]]);
    return [
      { output: 'da', actual: await s.readF32(daOut, rows * dims.H), expected: da, tol: tol(dims.V, 'V terms W2 · dz') },
      { output: 'dx', actual: await s.readF32(dxOut, rows * dims.K * dims.D), expected: dx, tol: tol(dims.H, 'H terms W1 · da') },
    ];
  }
  const seq = s.upload(c.seq);
  const rowPos = s.upload(c.rowPos);
  if (piece === 'inputGrad') {
    const k = s.kernel(inputGradKernel.create(device));
    dispatch(device, [[k, k.bind({ params: s.upload(c.params), seq, rowPos, da: s.upload(da), partials, grads }, cfg)]]);
    inputGradCpu(c.params, dims, c.seq, c.L, c.rowPos, da, ref);
    const got = await s.readF32(grads, L.size);
    return [{ output: 'dW1, db1', actual: got.subarray(L.w1, L.w2), expected: ref.subarray(L.w1, L.w2), tol: tol(rows, 'rows of x · da') }];
  }
  const k = s.kernel(embedGradKernel.create(device));
  dispatch(device, [[k, k.bind({ seq, rowPos, dx: s.upload(dx), partials, grads }, cfg)]]);
  embedGradCpu(dims, c.seq, c.L, c.rowPos, dx, ref);
  const got = await s.readF32(grads, L.size);
  return [{ output: 'd emb', actual: got.subarray(L.emb, L.w1), expected: ref.subarray(L.emb, L.w1), tol: tol(rows * dims.K, 'rows × K context slots of dx') }];
}

function pieceCase(piece: Piece, name: string, dims: MlpDims, rows: number, seed: number): SelfTestCase {
  return {
    kernel: KERNELS[piece],
    ...(piece === 'hiddenGrad' ? {} : { uses: [chunkSumKernel] }),
    name: `${name}: V${dims.V} K${dims.K} D${dims.D} H${dims.H}, ${rows} rows`,
    run: (device) => withScratch(device, (s) => runPiece(device, s, piece, dims, rows, seed)),
  };
}

const BASE: MlpDims = { V: 13, K: 3, D: 4, H: 8 };
const ROWS = MLP_WORKGROUP_SIZE + 1;

export const backwardCases: SelfTestCase[] = [
  pieceCase('headGrad', 'base', BASE, ROWS, 300 + ROWS),
  pieceCase('headGrad', '(H+1)·V = 65 outputs', { V: 13, K: 4, D: 5, H: 4 }, 37, 13 * 4),
  pieceCase('hiddenGrad', 'base', BASE, ROWS, 300 + ROWS),
  pieceCase('hiddenGrad', 'H and K·D = 65 (strided loops)', { V: 5, K: 13, D: 5, H: 65 }, 37, 5 * 65),
  pieceCase('inputGrad', 'base', BASE, ROWS, 300 + ROWS),
  pieceCase('inputGrad', '(K·D+1)·H = 65 outputs', { V: 64, K: 2, D: 32, H: 1 }, 37, 64),
  pieceCase('embedGrad', 'base', BASE, ROWS, 300 + ROWS),
  pieceCase('embedGrad', 'V·D = 65 outputs', { V: 13, K: 4, D: 5, H: 4 }, 37, 13 * 4),
];
