/**
 * Self-tests of the forward kernels (from tests/gpu/forward.gpu.test.ts): forward.wgsl embedProject
 * against embedProjectCpu, and the forward's two stages (forward.wgsl forwardHidden, then
 * forward.wgsl forwardLogits) against forwardCpu, fed the reference's own table (embedProjectCpu rounded to
 * f32, as the GPU stores it) so the table kernel and the forward are checked apart. Each forward
 * case runs both stages and is listed under one of them, checking its output (h or z).
 * Tolerance: proj entries are f32 sums of D products against float64 sums: atol 2e-6 sqrt(D),
 * rtol 1e-4. h and z are f32 sums of K table entries and H products against float64 sums, a few
 * f32 ulps of the largest partial sum apart: atol 2e-5, rtol 1e-4 for inputs of order 1; at
 * temperature 0.05 the logits are 20x larger, so atol 2e-4. Masked logits must be MASKED_LOGIT
 * bit for bit (the softmax kernels recognise them by value).
 */
import { createRng } from '../rng';
import { embedProjectCpu, forwardCpu, givenProjTable, MASKED_LOGIT, type MlpDims } from '../model/mlp';
import { embedProjectKernel, forwardHiddenKernel, forwardKernel, forwardLogitsKernel, MLP_WORKGROUP_SIZE, slotTableWords } from '../model/mlpKernels';
import { makeMlpCase } from './fixtures';
import { dispatch, exact, withScratch, type Check, type SelfTestCase, type Tolerance } from './harness';

const TOL: Tolerance = { atol: 2e-5, rtol: 1e-4, why: 'f32 sums of K table entries and H products against float64 sums' };
const TOL_COLD: Tolerance = { ...TOL, atol: 2e-4, why: 'f32 sums of K table entries and H products against float64 sums, with logits 20x larger at temperature 0.05' };
const projTol = (D: number): Tolerance => ({
  atol: 2e-6 * Math.sqrt(D),
  rtol: 1e-4,
  why: 'f32 sums of D products against float64 sums, error ~ sqrt(D) ulps: atol 2e-6 sqrt(D), rtol 1e-4',
});

function embedProjectCase(name: string, dims: MlpDims, seed: number): SelfTestCase {
  return {
    kernel: embedProjectKernel,
    name: `${name}: V${dims.V} K${dims.K} D${dims.D} H${dims.H}`,
    run: (device) =>
      withScratch(device, async (s) => {
        const c = makeMlpCase(dims, 1, createRng(seed));
        const k = s.kernel(embedProjectKernel.create(device));
        const proj = s.empty(slotTableWords(dims));
        dispatch(device, [[k, k.bind({ params: s.upload(c.params), proj }, { dims })]]);
        const got = await s.readF32(proj, slotTableWords(dims));
        return [{ output: 'proj', actual: got, expected: embedProjectCpu(c.params, dims), tol: projTol(dims.D) }];
      }),
  };
}

interface ForwardOptions {
  rowBase?: number;
  temperature?: number;
  /** Context tokens past the vocabulary (read as PAD). */
  pastVocab?: number;
}

/** The forward on one input, listed under `stage` and checking that stage's output. */
function forwardCase(stage: 'hidden' | 'logits', name: string, dims: MlpDims, rows: number, seed: number, o: ForwardOptions = {}): SelfTestCase {
  const [kernel, other] = stage === 'hidden' ? [forwardHiddenKernel, forwardLogitsKernel] : [forwardLogitsKernel, forwardHiddenKernel];
  return {
    kernel,
    uses: [other],
    name,
    run: (device) =>
      withScratch(device, async (s) => {
        const c = makeMlpCase(dims, rows, createRng(seed), { pastVocab: o.pastVocab });
        const T = o.temperature ?? 0.8;
        const base = o.rowBase ?? 0;
        // rowPos with `base` junk entries in front, so rowBase and outBase are exercised.
        const rowPos = new Uint32Array(base + rows);
        rowPos.set(c.rowPos, base);
        const proj = Float32Array.from(embedProjectCpu(c.params, dims));
        const k = s.kernel(forwardKernel.create(device));
        const h = s.empty((base + rows) * dims.H);
        const z = s.empty((base + rows) * dims.V);
        const call = k.bind(
          {
            params: s.upload(c.params), proj: s.upload(proj), seq: s.upload(c.seq), rowPos: s.upload(rowPos),
            grammar: s.upload(Uint32Array.from(c.grammar)), h, z,
          },
          { dims, seqLen: c.L, numRows: rows, rowBase: base, temperature: T },
        );
        dispatch(device, [[k, call]]);
        const gh = (await s.readF32(h, (base + rows) * dims.H)).subarray(base * dims.H);
        const gz = (await s.readF32(z, (base + rows) * dims.V)).subarray(base * dims.V);
        const ref = forwardCpu(c.params, dims, c.seq, c.L, c.rowPos, c.grammar, T, givenProjTable(Float64Array.from(proj), dims));
        if (stage === 'hidden') return [{ output: 'h', actual: gh, expected: ref.h, tol: TOL }];
        const checks: Check[] = [{ output: 'z', actual: gz, expected: ref.z, tol: T < 0.1 ? TOL_COLD : TOL }];
        if (T < 0.1) {
          const masked = [...ref.z.keys()].filter((i) => ref.z[i] === MASKED_LOGIT);
          checks.push({
            output: 'masked z',
            actual: masked.map((i) => gz[i]!),
            expected: masked.map((i) => ref.z[i]!),
            tol: exact('forbidden tokens must get MASKED_LOGIT bit for bit'),
          });
        }
        return checks;
      }),
  };
}

export const forwardCases: SelfTestCase[] = [
  embedProjectCase('base', { V: 13, K: 3, D: 4, H: 8 }, 41),
  // K·V·H = 65: a second workgroup with one live invocation.
  embedProjectCase('K·V·H = 65 outputs', { V: 13, K: 1, D: 3, H: 5 }, 65),
  // The PAD row only, and hidden units past the workgroup size.
  embedProjectCase('vocab 1, H 65', { V: 1, K: 2, D: 7, H: 65 }, 42),
  ...(['hidden', 'logits'] as const).flatMap((stage) => [
    forwardCase(stage, `rows ${MLP_WORKGROUP_SIZE + 1}`, { V: 13, K: 3, D: 4, H: 8 }, MLP_WORKGROUP_SIZE + 1, 100 + MLP_WORKGROUP_SIZE + 1),
    // Rows x H and rows x V not multiples of the workgroup size.
    forwardCase(stage, 'hidden 65, vocab 67', { V: 67, K: 2, D: 3, H: 65 }, 17, 7 * 65),
    forwardCase(stage, 'context past the sequence start (PAD), vocab 1, rowBase 7', { V: 1, K: 9, D: 2, H: 5 }, 12, 5, { rowBase: 7 }),
    forwardCase(stage, 'context tokens past the vocabulary (PAD)', { V: 11, K: 4, D: 3, H: 6 }, 30, 77, { pastVocab: 20 }),
    forwardCase(stage, 'temperature 0.05, masked logits', { V: 11, K: 2, D: 2, H: 4 }, 40, 9, { temperature: 0.05 }),
  ]),
];
