/**
 * Self-tests of the row-softmax kernels in each layout (thread, unrolled, subgroup): sample vs
 * sampleCpu, tokenStats vs tokenStatsCpu, logitGrad vs logitGradCpu,
 * on ordinary rows and on the extreme rows of their GPU tests (logits ±1e4, one dominant token, one allowed token, all equal).
 * Tolerances, from tests/gpu/{sample,tokenStats,logitGrad}.gpu.test.ts:
 * - sample: tokens exactly. The GPU's f32 CDF differs from the float64 one by ~1e-7, so a mismatch
 *   needs a uniform within 1e-7 of a CDF edge, which these fixed seeds do not hit.
 * - tokenStats: an f32 log-sum-exp is off by a few ulps of |lse| ~ max|z|, so
 *   atol = 1e-5 + 1e-6 max|z| and rtol = 1e-4 + 1e-6 max|z| (sum pi^2 = exp(.. - 2 lse) turns that
 *   absolute error into a relative one).
 * - logitGrad: dz = g (onehot - p) / T with p from an f32 log-sum-exp: atol 1e-6 + 1e-6 max|z|,
 *   rtol 1e-4. Forbidden tokens and rows with dlogp = 0 must be exactly 0.
 * sample and tokenStats also run their sampler path (reduced-precision logits, top-k, top-p;
 * kernels/softmax/sampler.ts) with the same tolerances, as tests/gpu/sampler.gpu.test.ts does.
 */
import { createRng } from '../rng';
import { MASKED_LOGIT } from '../model/mlp';
import { MLP_WORKGROUP_SIZE } from '../model/mlpKernels';
import { logitGradCpu, logitGradKernels } from '../softmax/logitGrad';
import { sampleCpu, sampleKernels, SAMPLE_WORKGROUP_SIZE } from '../softmax/sample';
import { tokenStatsCpu, tokenStatsKernels, TOKEN_STATS_WORKGROUP_SIZE } from '../softmax/tokenStats';
import type { SamplerOptions } from '../softmax/sampler';
import { SUBGROUP_ROWS_PER_GROUP } from '../softmax/rowSubgroup';
import { UNROLLED_MAX_VOCAB } from '../softmax/rowUnrolled';
import type { KernelVariant, RowLayout } from '../selectors';
import { extremeSampleInput, logitCase, maxAbsLogit, randomSampleInput, type LogitCase, type RowKind, type SampleInput } from './fixtures';
import { dispatch, exact, joined, withScratch, type SelfTestCase } from './harness';

const KIND_NAMES: Record<RowKind, string> = {
  normal: 'N(0, 2) logits',
  huge: 'logits ±1e4',
  dominant: 'one dominant logit (60)',
  single: 'one allowed token',
  flat: 'all logits equal',
};
const EXTREME: RowKind[] = ['huge', 'dominant', 'single', 'flat'];

// ---- sample ----

function sampleCase(variant: RowLayout, name: string, input: () => SampleInput, seed: number, iter: number, sampler?: SamplerOptions): SelfTestCase {
  const sampleKernel = sampleKernels[variant];
  return {
    kernel: sampleKernel,
    name,
    run: (device) =>
      withScratch(device, async (s) => {
        const c = input();
        const rows = c.rowPos.length;
        const cpuSeq = new Int32Array(c.seqLen);
        sampleCpu(c.z, c.V, c.rowPos, cpuSeq, seed, iter, sampler);
        const k = s.kernel(sampleKernel.create(device));
        const seq = s.upload(new Uint32Array(c.seqLen));
        const sampled = s.upload(new Uint32Array(rows));
        const call = k.bind({ z: s.upload(c.z), rowPos: s.upload(c.rowPos), seq, sampled }, { vocab: c.V, numRows: rows, seed, iter, sampler });
        dispatch(device, [[k, call]]);
        const gpuSeq = await s.readU32(seq, c.seqLen);
        const out = await s.readU32(sampled, rows);
        const expected = Int32Array.from(c.rowPos, (p) => cpuSeq[p]!);
        return [
          {
            output: 'tokens',
            actual: joined(gpuSeq, out),
            expected: joined(cpuSeq, expected),
            tol: exact('same counter-based uniform on both sides; f32 vs float64 CDF only matters within 1e-7 of an edge'),
          },
        ];
      }),
  };
}

// ---- tokenStats ----

function tokenStatsCase(variant: RowLayout, name: string, c: () => LogitCase, rowBase = 0, sampler?: SamplerOptions): SelfTestCase {
  const tokenStatsKernel = tokenStatsKernels[variant];
  return {
    kernel: tokenStatsKernel,
    name,
    run: (device) =>
      withScratch(device, async (s) => {
        const lc = c();
        const n = lc.rowPos.length;
        const rows = n - rowBase;
        const ref = tokenStatsCpu(lc.z.subarray(rowBase * lc.V), lc.V, lc.seq, lc.rowPos.subarray(rowBase), undefined, sampler);
        const k = s.kernel(tokenStatsKernel.create(device));
        const [logp, entropy, sumP2] = [s.empty(n), s.empty(n), s.empty(n)];
        const call = k.bind(
          { z: s.upload(lc.z), seq: s.upload(lc.seq), rowPos: s.upload(lc.rowPos), logp, entropy, sumP2 },
          { vocab: lc.V, numRows: rows, rowBase, sampler },
        );
        dispatch(device, [[k, call]]);
        const got = [logp, entropy, sumP2].map(async (b) => (await s.readF32(b, n)).subarray(rowBase));
        const [gl, ge, gs] = await Promise.all(got);
        const m = maxAbsLogit(lc.z);
        return [
          {
            output: 'logp, entropy, sumP2',
            actual: joined(gl!, ge!, gs!),
            expected: joined(ref.logp, ref.entropy, ref.sumP2),
            tol: {
              atol: 1e-5 + 1e-6 * m,
              rtol: 1e-4 + 1e-6 * m,
              why: 'an f32 log-sum-exp is off by a few ulps of |lse| ~ max|z|: atol 1e-5 + 1e-6 max|z|, rtol 1e-4 + 1e-6 max|z|',
            },
          },
        ];
      }),
  };
}

// ---- logitGrad ----

const T = 0.7;

function logitGradCase(layout: KernelVariant, name: string, c: () => LogitCase, zeroFrac = 0.2): SelfTestCase {
  const logitGradKernel = logitGradKernels[layout];
  return {
    kernel: logitGradKernel,
    name,
    run: (device) =>
      withScratch(device, async (s) => {
        const lc = c();
        const rows = lc.rowPos.length;
        const rng = createRng(rows + lc.V);
        const dlogp = Float32Array.from({ length: rows }, () => (rng.next() < zeroFrac ? 0 : rng.normal()));
        const ref = logitGradCpu(lc.z, lc.V, lc.seq, lc.rowPos, dlogp, T);
        const k = s.kernel(logitGradKernel.create(device));
        const out = s.empty(rows * lc.V);
        const call = k.bind(
          { z: s.upload(lc.z), seq: s.upload(lc.seq), rowPos: s.upload(lc.rowPos), dlogp: s.upload(dlogp), dz: out },
          { vocab: lc.V, numRows: rows, temperature: T },
        );
        dispatch(device, [[k, call]]);
        const dz = await s.readF32(out, rows * lc.V);
        const zeros: number[] = [];
        for (let i = 0; i < dz.length; i++) if (dlogp[Math.floor(i / lc.V)] === 0 || lc.z[i] === MASKED_LOGIT) zeros.push(i);
        const m = maxAbsLogit(lc.z);
        return [
          {
            output: 'dz',
            actual: dz,
            expected: ref,
            tol: { atol: 1e-6 + 1e-6 * m, rtol: 1e-4, why: 'g (onehot − p) / T with p from an f32 log-sum-exp: atol 1e-6 + 1e-6 max|z|, rtol 1e-4' },
          },
          {
            output: 'dz = 0 (masked, dlogp 0)',
            actual: zeros.map((i) => dz[i]!),
            expected: zeros.map(() => 0),
            tol: exact('forbidden tokens and rows without a gradient get exactly 0'),
          },
        ];
      }),
  };
}

/** The sample and tokenStats cases of one layout; `rowBlock` is its rows per workgroup, whose edges get a case. */
function rowCases(variant: RowLayout, rowBlock: number): SelfTestCase[] {
  const rows = rowBlock + 1;
  // The unrolled versions take vocabularies up to UNROLLED_MAX_VOCAB: their widest instead of 130.
  const wide = variant === 'unrolled' ? UNROLLED_MAX_VOCAB : 130;
  return [
    sampleCase(variant, `rows ${rows}`, () => randomSampleInput(rows, 17, rows), 12345, 2),
    sampleCase(variant, 'rows 123', () => randomSampleInput(123, 17, 123), 12345, 4),
    sampleCase(variant, 'logits ±1e4, one dominant, one allowed, near-uniform rows', extremeSampleInput, 2024, 5),

    tokenStatsCase(variant, `rows ${rows}`, () => logitCase(rows, 23, rows)),
    tokenStatsCase(variant, 'vocab 1', () => logitCase(20, 1, 1)),
    tokenStatsCase(variant, `vocab ${wide}, rowBase 13`, () => logitCase(50, wide, 2), 13),
    ...EXTREME.map((kind) => tokenStatsCase(variant, KIND_NAMES[kind], () => logitCase(40, 16, 4, [kind]))),

    sampleCase(variant, 'sampler bf16, top-k 5, top-p 0.8', () => randomSampleInput(rows, 19, 7), 99, 1, SAMPLER_CASE),
    sampleCase(variant, 'sampler fp16, top-p 0.5: logits ±1e4, one dominant, one allowed, near-uniform', extremeSampleInput, 7, 3, SAMPLER_EXTREME),
    tokenStatsCase(variant, 'sampler bf16, top-k 5, top-p 0.8', () => logitCase(rows, 23, 3), 0, SAMPLER_CASE),
    tokenStatsCase(variant, 'sampler fp16, top-p 0.5: extreme rows', () => logitCase(40, 16, 5, EXTREME), 0, SAMPLER_EXTREME),
  ];
}

const SAMPLER_CASE: SamplerOptions = { precision: 'bf16', topK: 5, topP: 0.8 };
const SAMPLER_EXTREME: SamplerOptions = { precision: 'fp16', topK: 0, topP: 0.5 };

/** logitGrad's cases in one layout; `rowBlock` is its rows per workgroup, whose edges get a case. */
function logitGradCases(layout: KernelVariant, rowBlock: number): SelfTestCase[] {
  const rows = rowBlock + 1;
  return [
    logitGradCase(layout, `rows ${rows}`, () => logitCase(rows, 19, 50 + rows)),
    ...EXTREME.map((kind) => logitGradCase(layout, KIND_NAMES[kind], () => logitCase(30, 12, 8, [kind]))),
    logitGradCase(layout, 'every dlogp 0', () => logitCase(70, 5, 9), 1),
  ];
}

/** The cases of one variant: its sample, tokenStats and logitGrad. */
function variantCases(variant: KernelVariant, rowBlock: number): SelfTestCase[] {
  return [...rowCases(variant, rowBlock), ...logitGradCases(variant, rowBlock)];
}

// The thread versions' workgroup sizes are all 64 (SAMPLE_WORKGROUP_SIZE, TOKEN_STATS_WORKGROUP_SIZE, MLP_WORKGROUP_SIZE).
const THREAD_ROWS = Math.max(SAMPLE_WORKGROUP_SIZE, TOKEN_STATS_WORKGROUP_SIZE, MLP_WORKGROUP_SIZE);

/** The subgroup variants' cases need a device with the `subgroups` feature (runSelfTest skips them elsewhere). */
export const softmaxCases: SelfTestCase[] = [
  ...variantCases('thread', THREAD_ROWS),
  ...rowCases('unrolled', THREAD_ROWS),
  ...variantCases('subgroup', SUBGROUP_ROWS_PER_GROUP),
];
