/**
 * Self-tests of the policy-loss kernels (from tests/gpu/seqRatio.gpu.test.ts and
 * tests/gpu/ppoLoss.gpu.test.ts): ppoLoss.wgsl seqRatio vs seqRatioCpu in its three modes (GSPO sequence,
 * SeeUPO turn, GMPO geometric), whole batches and a minibatch, and ppoLoss.wgsl vs ppoLossCpu in
 * every ratio mode (token, sequence, geometric, turn stage) and KL type (k3, k1, k2), with both clip
 * sides, the dual clip and log-ratios past the ±20 clamp. The ppoLoss cases in modes 1-3 get the
 * reference's f32 seqLog on both sides, so they test ppoLoss alone.
 * Tolerances:
 * - seqRatio: log-ratios of order 1, atol 1e-6, rtol 1e-5: the GPU takes logp - logpOld in f32 (half
 *   an ulp of |logp| <= ~10) and sums at most 6 terms. Past the clamp (|logp| up to ~60) atol 2e-5:
 *   each difference is off by half an ulp of 64, each partial sum by half an ulp of 128. Entries
 *   the call does not own keep their contents (NaN here; NaN = NaN in the comparison), and an
 *   empty segment is exactly 0.
 * - ppoLoss: loss, dlogp, ratio and kl involve one or two f32 exps of log-ratios up to 20, so rtol
 *   1e-5, and atol 1e-6 (k3 = exp(k) - k - 1 cancels for small k; k1 = logp - logpRef is off by half
 *   an ulp of |logp| <= ~10); k1 and k2 past the clamp atol 1e-5 (half an ulp of 64). The clip flag
 *   exactly: a flip needs a log-ratio within 1e-7 of a bound, which these seeds do not produce.
 */
import { KL_TYPES, PPO_LOSS_WORKGROUP_SIZE, PPO_ROW_WORDS, ppoLossCpu, ppoLossKernel, RATIO_MODES, unpackPpoRows, type PpoLossOptions } from '../loss/ppoLoss';
import { seqRatioCpu, seqRatioKernel, seqRatioSegments, type SeqRatioMode, type SeqRatioOptions } from '../loss/seqRatio';
import {
  ppoRows,
  ppoTrajInputs,
  RATIO_ACTION_LEN as ACTION_LEN,
  RATIO_TP as TP,
  RATIO_TURNS as TURNS,
  seqRatioInputs,
  type PpoInputs,
  type SeqRatioInputs,
} from './fixtures';
import { dispatch, exact, joined, withScratch, type SelfTestCase, type Tolerance } from './harness';

// ---- seqRatio ----

const SEQ_TOL: Tolerance = { atol: 1e-6, rtol: 1e-5, why: 'f32 logp − logpOld (half an ulp of |logp| ≤ ~10) averaged over ≤ 6 rows; entries of other minibatches untouched' };
const SEQ_TOL_CLAMP: Tolerance = { atol: 2e-5, rtol: 1e-5, why: '|logp| up to ~60: each f32 difference is off by half an ulp of 64, each partial sum by half an ulp of 128' };

const SEQ_MODES: Record<SeqRatioMode, Omit<SeqRatioOptions, 'tp'>> = {
  sequence: { mode: 'sequence' },
  turn: { mode: 'turn' },
  geometric: { mode: 'geometric', clipLow: 0.2, clipHigh: 0.25 },
};

/** seqRatio on trajectories n0..n1 of `inp` (the rest of the output stays NaN on both sides). */
function seqRatioCase(name: string, mode: SeqRatioMode, input: () => SeqRatioInputs, o: { traj?: [number, number]; tol?: Tolerance } = {}): SelfTestCase {
  return {
    kernel: seqRatioKernel,
    name,
    run: (device) =>
      withScratch(device, async (s) => {
        const inp = input();
        const N = inp.logp.length / TP;
        const [n0, n1] = o.traj ?? [0, N];
        const opts: SeqRatioOptions = { ...SEQ_MODES[mode], tp: TP, actionLen: ACTION_LEN, maxTurns: TURNS, rowBase: n0 * TP };
        const S = seqRatioSegments(opts);
        const sub = (a: Float32Array) => a.subarray(n0 * TP, n1 * TP);
        const ref = new Float32Array(N * S).fill(NaN);
        seqRatioCpu(sub(inp.mask), sub(inp.logp), sub(inp.logpOld), sub(inp.adv), opts, ref);
        const k = s.kernel(seqRatioKernel.create(device));
        const out = s.empty(N * S);
        const call = k.bind(
          { mask: s.upload(inp.mask), logp: s.upload(inp.logp), logpOld: s.upload(inp.logpOld), adv: s.upload(inp.adv), out },
          { ...opts, numRows: (n1 - n0) * TP },
        );
        dispatch(device, [[k, call]]);
        const got = await s.readF32(out, N * S);
        const zeros: number[] = [];
        ref.forEach((x, i) => x === 0 && zeros.push(got[i]!));
        return [
          { output: mode === 'turn' ? 'log ratio per turn' : 'log ratio per trajectory', actual: got, expected: ref, tol: o.tol ?? SEQ_TOL },
          { output: '0 for an empty segment', actual: zeros, expected: zeros.map(() => 0), tol: exact('a segment without masked-in rows is exactly 0') },
        ];
      }),
  };
}

// ---- ppoLoss ----

const OPTS: PpoLossOptions = { clipLow: 0.2, clipHigh: 0.28, dualClip: 3, klCoef: 0.1 };
const MODE_OPTS: Record<number, PpoLossOptions> = {
  0: OPTS,
  1: { clipLow: 0.05, clipHigh: 0.06, dualClip: 3, klCoef: 0.1, ratioMode: RATIO_MODES.sequence },
  2: { clipLow: 0.1, clipHigh: 0.12, dualClip: 3, klCoef: 0.1, ratioMode: RATIO_MODES.geometric },
  3: { clipLow: 0.05, clipHigh: 0.05, dualClip: 3, klCoef: 0.1, ratioMode: RATIO_MODES.turn, stage: 1 },
};
const SEQ_MODE: Record<number, SeqRatioMode> = { 1: 'sequence', 2: 'geometric', 3: 'turn' };
const MODE_NAME = ['token', 'sequence (GSPO)', 'geometric (GMPO)', 'turn stage (SeeUPO)'];
const KL_NAME = Object.keys(KL_TYPES);

const PPO_WHY = 'one or two f32 exps of log-ratios up to 20 (rtol); k3 cancels for small k and k1 = logp − logpRef is off by half an ulp of |logp| (atol)';
const PPO_WHY_CLAMP = 'past the ±20 clamp |logp| reaches ~60: logp − logpRef, so k1 and the k2 gradient, is off by half an ulp of 64';

interface PpoRun {
  inp: PpoInputs;
  o: PpoLossOptions;
  rowBase?: number;
  seqLog?: Float32Array;
  /** [R] IS weights on the policy term, uploaded after the weights (the loss stage's layout). */
  isWeight?: Float32Array;
}

/** The reference's seqLog for a trajectory input (modes 1-3), over the whole batch. */
function seqLogOf(inp: PpoInputs & { mask: Float32Array }, o: PpoLossOptions): Float32Array | undefined {
  const mode = o.ratioMode ?? 0;
  if (mode === 0) return undefined;
  return seqRatioCpu(inp.mask, inp.logp, inp.logpOld, inp.adv, { mode: SEQ_MODE[mode]!, tp: TP, actionLen: ACTION_LEN, maxTurns: TURNS, clipLow: o.clipLow, clipHigh: o.clipHigh });
}

/** Runs each of `runs` (rows rowBase.. of its input) and compares all of them as one output. */
function ppoLossCase(name: string, runs: () => PpoRun[], atol = 1e-6): SelfTestCase {
  return {
    kernel: ppoLossKernel,
    name,
    run: (device) =>
      withScratch(device, async (s) => {
        const k = s.kernel(ppoLossKernel.create(device));
        const got: Float32Array[] = [];
        const want: Float32Array[] = [];
        const gotClip: Int32Array[] = [];
        const wantClip: Int32Array[] = [];
        for (const { inp, o, rowBase = 0, seqLog, isWeight } of runs()) {
          const R = inp.logp.length;
          const sub = (a: Float32Array) => a.subarray(rowBase);
          const ref = ppoLossCpu(sub(inp.logp), sub(inp.logpOld), sub(inp.logpRef), sub(inp.adv), sub(inp.weight), { ...o, rowBase }, seqLog, isWeight && sub(isWeight));
          const weight = isWeight ? Float32Array.of(...inp.weight, ...isWeight) : inp.weight;
          const dlogp = s.empty(R);
          const out = s.empty(R * PPO_ROW_WORDS);
          const call = k.bind(
            {
              logp: s.upload(inp.logp), logpOld: s.upload(inp.logpOld), logpRef: s.upload(inp.logpRef),
              adv: s.upload(inp.adv), weight: s.upload(weight), seqLog: s.upload(seqLog ?? new Float32Array(1)), dlogp, out,
            },
            { ...o, numRows: R - rowBase, rowBase, ...(isWeight ? { isBase: R } : {}) },
          );
          dispatch(device, [[k, call]]);
          const d = (await s.readF32(dlogp, R)).subarray(rowBase);
          const rows = unpackPpoRows(await s.read(out, R * PPO_ROW_WORDS), R);
          got.push(rows.loss.subarray(rowBase), d, rows.ratio.subarray(rowBase), rows.kl.subarray(rowBase));
          want.push(ref.loss, ref.dlogp, ref.ratio, ref.kl);
          gotClip.push(rows.clip.subarray(rowBase));
          wantClip.push(ref.clip);
        }
        return [
          { output: 'loss, dlogp, ratio, kl', actual: joined(...got), expected: joined(...want), tol: { atol, rtol: 1e-5, why: atol > 1e-6 ? PPO_WHY_CLAMP : PPO_WHY } },
          { output: 'clip', actual: joined(...gotClip), expected: joined(...wantClip), tol: exact('a flag; a flip needs a log-ratio within 1e-7 of a clip bound, which these seeds avoid') },
        ];
      }),
  };
}

/** Mode `mode` with KL `kl` on 23 seeded trajectories (the GPU test's seed), from trajectory `from`. */
function modeRun(mode: number, kl: number, from = 0, o: Partial<PpoLossOptions> = {}): () => PpoRun[] {
  return () => {
    const opts = { ...MODE_OPTS[mode]!, klType: kl, tp: TP, actionLen: ACTION_LEN, maxTurns: TURNS, ...o };
    const inp = ppoTrajInputs(23, 100 + mode * 3 + kl);
    return [{ inp, o: opts, rowBase: from * TP, seqLog: seqLogOf(inp, opts) }];
  };
}

/** IS weights of a rollout correction on `R` rows: truncated ratios in (0, 2], some exactly 1. */
function isWeights(R: number, seed: number): Float32Array {
  let x = seed;
  return Float32Array.from({ length: R }, () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    const u = x / 2147483648;
    return u < 0.2 ? 1 : Math.min(Math.exp(2 * (u - 0.5)), 2);
  });
}

/** Mode `mode` past the ±20 clamp: 20 trajectories, logp spread 15 (the GPU test's seed). */
function pastClampRun(mode: number, kl: number): () => PpoRun[] {
  return () => {
    const o = { ...MODE_OPTS[mode]!, klType: KL_TYPES.k2, tp: TP, actionLen: ACTION_LEN, maxTurns: TURNS };
    const inp = ppoTrajInputs(20, 130 + mode, 15);
    // seqLog as the test computes it (from the k2 options; the KL type does not change it).
    return [{ inp, o: { ...o, klType: kl }, seqLog: seqLogOf(inp, o) }];
  };
}

const modeName = (mode: number, kl: number) => `${MODE_NAME[mode]}, ${KL_NAME[kl]}`;

export const policyLossCases: SelfTestCase[] = [
  seqRatioCase('sequence (GSPO), N 70', 'sequence', () => seqRatioInputs(70, 70 * 7 + 'sequence'.length)),
  seqRatioCase('turn (SeeUPO), N 70', 'turn', () => seqRatioInputs(70, 70 * 7 + 'turn'.length)),
  seqRatioCase('geometric (GMPO), N 70', 'geometric', () => seqRatioInputs(70, 70 * 7 + 'geometric'.length)),
  seqRatioCase('turn (SeeUPO), minibatch: trajectories 9..32 of 40', 'turn', () => seqRatioInputs(40, 41), { traj: [9, 32] }),
  ...(['sequence', 'turn', 'geometric'] as const).map((mode) =>
    seqRatioCase(`${mode}, log-ratios past the ±20 clamp`, mode, () => seqRatioInputs(30, 42, 15), { tol: SEQ_TOL_CLAMP }),
  ),

  ppoLossCase(`token, k3: rows ${PPO_LOSS_WORKGROUP_SIZE + 1}`, () => [{ inp: ppoRows(PPO_LOSS_WORKGROUP_SIZE + 1, PPO_LOSS_WORKGROUP_SIZE + 1), o: OPTS }]),
  ppoLossCase('token, k3: rows 1000', () => [{ inp: ppoRows(1000, 1000), o: OPTS }]),
  ppoLossCase('token: both clip sides and the dual clip, klCoef 0', () => [{ inp: ppoRows(400, 5, 0.6), o: { ...OPTS, klCoef: 0 } }]),
  ppoLossCase('token: clipLow 1 (no floor), rowBase 17', () => [{ inp: ppoRows(90, 7), o: { clipLow: 1, clipHigh: 0.2, dualClip: 10, klCoef: 0 }, rowBase: 17 }]),
  ppoLossCase(modeName(0, KL_TYPES.k1), modeRun(0, KL_TYPES.k1)),
  ppoLossCase(modeName(0, KL_TYPES.k2), modeRun(0, KL_TYPES.k2)),
  ppoLossCase(`${modeName(1, KL_TYPES.k1)}: minibatch, rowBase ${5 * TP}`, modeRun(1, KL_TYPES.k1, 5)),
  ppoLossCase(modeName(2, KL_TYPES.k2), modeRun(2, KL_TYPES.k2)),
  ppoLossCase(modeName(3, KL_TYPES.k3), modeRun(3, KL_TYPES.k3)),
  ppoLossCase('turn stage (SeeUPO), k3: stages 0, 1 and 2', () => {
    const inp = ppoTrajInputs(11, 120);
    return [0, 1, 2].map((stage) => {
      const o = { ...MODE_OPTS[3]!, stage, tp: TP, actionLen: ACTION_LEN, maxTurns: TURNS };
      return { inp, o, seqLog: seqLogOf(inp, o) };
    });
  }),
  ppoLossCase('token, k3: IS weights on the policy term, minibatch rowBase 17', () => [{ inp: ppoRows(300, 8, 0.6), o: OPTS, rowBase: 17, isWeight: isWeights(300, 8) }]),
  ppoLossCase(`${modeName(2, KL_TYPES.k3)}: IS weights`, () => modeRun(2, KL_TYPES.k3)().map((r) => ({ ...r, isWeight: isWeights(r.inp.logp.length, 9) }))),
  ppoLossCase(`${modeName(3, KL_TYPES.k1)}: IS weights`, () => modeRun(3, KL_TYPES.k1)().map((r) => ({ ...r, isWeight: isWeights(r.inp.logp.length, 10) }))),
  ppoLossCase('token, k3: log-ratios past the ±20 clamp', () => [{ inp: ppoRows(200, 6, 15), o: OPTS }]),
  ppoLossCase(`${modeName(1, KL_TYPES.k2)}: past the ±20 clamp`, pastClampRun(1, KL_TYPES.k2), 1e-5),
  ppoLossCase(`${modeName(2, KL_TYPES.k3)}: past the ±20 clamp`, pastClampRun(2, KL_TYPES.k3), 1e-5),
  ppoLossCase(`${modeName(3, KL_TYPES.k2)}: past the ±20 clamp`, pastClampRun(3, KL_TYPES.k2), 1e-5),
];
