/**
 * Self-tests of trajGradNorm.wgsl (VCPO's per-trajectory gradient norm) against trajGradNormCpu
 * (kernels/model/trajGradNorm.ts). The kernel is fed the f32 dz and da the backend's logitGrad and
 * hiddenGrad would give (their own references, on the score loss dlogp = mask); the reference forms
 * them in float64 from z. Cases have more row pairs and embedding entries than a workgroup's 64
 * lanes (Tp^2 = 144, Tp K D = 80 to 144), 65 trajectories (workgroups), context tokens past the
 * vocabulary (PAD), capped IS weights and fully masked trajectories (exactly 0).
 * Tolerance: g2 is a sum of Tp^2 row-pair products whose terms partly cancel (dz_t . dz_s < 0 for
 * different tokens), so its f32 error scales with the sum of the |terms| rather than with g2. On
 * SwiftShader these cases stay within 3.5e-7 relative; rtol 2e-5 and atol 1e-6 times the case's
 * largest g2 leave room for a summation order other than the reference's.
 */
import { logitGradCpu } from '../softmax/logitGrad';
import { forwardCpu, hiddenDaCpu, type MlpDims } from '../model/mlp';
import { trajGradNormCpu, trajGradNormKernel } from '../model/trajGradNorm';
import { packTrajStats, TRAJ_STATS_WORDS, unpackTrajStats } from '../stats/trajStats';
import { createRng } from '../rng';
import { makeMlpCase } from './fixtures';
import { dispatch, exact, withScratch, type SelfTestCase } from './harness';

/** The inputs of one case: tp rows per trajectory, every `emptyEvery`-th trajectory fully masked. */
function trajGradNormSetup(dims: MlpDims, N: number, tp: number, seed: number, isCap: number, emptyEvery = 0, pastVocab = 0) {
  const rng = createRng(seed);
  const c = makeMlpCase(dims, N * tp, rng, { pastVocab });
  const temperature = 0.8;
  const f = forwardCpu(c.params, dims, c.seq, c.L, c.rowPos, c.grammar, temperature);
  const mask = Float32Array.from({ length: N * tp }, (_, r) => {
    const n = Math.floor(r / tp);
    return emptyEvery > 0 && n % emptyEvery === emptyEvery - 1 ? 0 : rng.next() < 0.8 ? 1 : 0;
  });
  const logIS = Float32Array.from({ length: N }, () => rng.normal() * 1.5);
  const dz = logitGradCpu(f.z, dims.V, c.seq, c.rowPos, mask, temperature);
  const da = hiddenDaCpu(c.params, dims, N * tp, f.h, dz);
  const inp = { params: c.params, dims, seq: c.seq, L: c.L, rowPos: c.rowPos, h: f.h, z: f.z, mask, temperature, logIS, isCap };
  return { inp, dz, da, ref: trajGradNormCpu(inp, tp) };
}

function trajGradNormCase(name: string, dims: MlpDims, N: number, tp: number, seed: number, isCap: number, emptyEvery = 0, pastVocab = 0): SelfTestCase {
  return {
    kernel: trajGradNormKernel,
    name: `${name}: V${dims.V} K${dims.K} D${dims.D} H${dims.H}, ${N} trajectories of ${tp} rows`,
    run: (device) =>
      withScratch(device, async (s) => {
        const { inp, dz, da, ref } = trajGradNormSetup(dims, N, tp, seed, isCap, emptyEvery, pastVocab);
        const stats = packTrajStats({ len: new Float32Array(N).fill(1), entMean: new Float32Array(N), logIS: inp.logIS, g2: new Float32Array(N).fill(-1) });
        const out = s.upload(stats);
        const k = s.kernel(trajGradNormKernel.create(device));
        const call = k.bind(
          { params: s.upload(inp.params), h: s.upload(inp.h), dz: s.upload(dz), da: s.upload(da), seq: s.upload(inp.seq), rowPos: s.upload(inp.rowPos), mask: s.upload(inp.mask), stats: out },
          { numTraj: N, tp, seqLen: inp.L, dims, isCap },
        );
        dispatch(device, [[k, call]]);
        const got = unpackTrajStats(await s.readF32(out, N * TRAJ_STATS_WORDS), N);
        const empty = Array.from(ref).flatMap((_, n) => (inp.mask.subarray(n * tp, (n + 1) * tp).some((m) => m !== 0) ? [] : [n]));
        const big = Math.max(...ref);
        return [
          {
            output: 'g2',
            actual: got.g2,
            expected: ref,
            tol: { atol: 1e-6 * big, rtol: 2e-5, why: 'f32 sums of Tp² row-pair products that partly cancel, against float64: rtol 2e-5, atol 1e-6 × the largest g2' },
          },
          { output: 'empty = 0; other words kept', actual: [...empty.map((n) => got.g2[n]!), ...got.logIS], expected: [...empty.map(() => 0), ...inp.logIS], tol: exact('a trajectory with no masked row has g2 exactly 0, and the kernel writes no other word') },
        ];
      }),
  };
}

export const trajGradNormCases: SelfTestCase[] = [
  trajGradNormCase('base', { V: 13, K: 3, D: 4, H: 8 }, 9, 6, 41, 8, 4),
  trajGradNormCase('65 trajectories, tokens past the vocabulary, no IS weight', { V: 11, K: 4, D: 3, H: 16 }, 65, 4, 42, 0, 5, 20),
  trajGradNormCase('H = 65, IS cap 1.5', { V: 7, K: 2, D: 5, H: 65 }, 5, 8, 43, 1.5),
  trajGradNormCase('more row pairs than lanes', { V: 9, K: 3, D: 4, H: 10 }, 6, 12, 44, 8, 3),
];
