/**
 * ppoLoss.wgsl vs ppoLossCpu (kernels/loss/ppoLoss.ts), in every ratio mode (token, GSPO sequence, GMPO
 * geometric, SeeUPO turn stage, SAMPO's step) and KL type (k3, k1, k2). Tolerances: ratio, loss and dlogp involve
 * one or two f32 exps of log-ratios up to 20, so rtol 1e-5 (exp's f32 error grows with its argument:
 * ~1e-6 relative at 20; mode 3 multiplies two such exps) and atol 1e-6 (k3 = exp(k) - k - 1 cancels
 * for small k, an absolute f32 error of ~1e-7; k1 = logp - logpRef is off by half an ulp of |logp|
 * <= ~10). Inputs past the +-20 clamp (|logp| up to ~60) use atol 1e-5: there the f32 difference
 * logp - logpRef, and so k1 and k2's gradient, is off by up to half an ulp of 64 (3.8e-6).
 * The modes that read seqLog get the same f32 seqLog on both sides (the reference's), so they test
 * ppoLoss alone; one chained test feeds ppoLoss.wgsl seqRatio's own output. clip must match exactly: a flip
 * needs a log-ratio within 1e-7 of a clip bound, which these seeds do not produce.
 */
import { describe, expect, it } from 'vitest';
import { KL_TYPES, PPO_LOSS_WORKGROUP_SIZE, RATIO_MODES, ppoLossCpu, ppoLossKernel, unpackPpoRows, PPO_ROW_WORDS, type PpoLossOptions } from '../../kernels/loss/ppoLoss';
import { seqRatioCpu, seqRatioKernel, type SeqRatioMode } from '../../kernels/loss/seqRatio';
import { expectClose, expectEqualArrays } from '../helpers/expectClose';
import { dispatch, edgeSizes, Scratch } from '../../kernels/selftest/harness';
import { withValidation } from '../helpers/validation';
import { requireGpu } from '../helpers/requireGpu';
import { ppoRows as inputs, ppoTrajInputs as trajInputs, RATIO_ACTION_LEN, RATIO_TP, RATIO_TURNS, type PpoInputs } from '../../kernels/selftest/fixtures';

const OPTS: PpoLossOptions = { clipLow: 0.2, clipHigh: 0.28, dualClip: 3, klCoef: 0.1 };

/** Runs the kernel on rows rowBase.. of `inp` and compares with the reference; returns the reference. */
async function check(inp: PpoInputs, o: PpoLossOptions, name: string, rowBase = 0, seqLog?: Float32Array, atol = 1e-6, isWeight?: Float32Array) {
  const device = await requireGpu();
  const R = inp.logp.length;
  const sub = (a: Float32Array) => a.subarray(rowBase);
  const ref = ppoLossCpu(sub(inp.logp), sub(inp.logpOld), sub(inp.logpRef), sub(inp.adv), sub(inp.weight), { ...o, rowBase }, seqLog, isWeight && sub(isWeight));
  // A rollout correction's IS weights follow the aggregation weights in the same buffer.
  const weight = isWeight ? Float32Array.of(...inp.weight, ...isWeight) : inp.weight;
  const got = await withValidation(device, async () => {
    const g = new Scratch(device);
    const kernel = ppoLossKernel.create(device);
    const dlogp = g.empty(R);
    const out = g.empty(R * PPO_ROW_WORDS);
    const call = kernel.bind(
      {
        logp: g.upload(inp.logp), logpOld: g.upload(inp.logpOld), logpRef: g.upload(inp.logpRef),
        adv: g.upload(inp.adv), weight: g.upload(weight), seqLog: g.upload(seqLog ?? new Float32Array(1)), dlogp, out,
      },
      { ...o, numRows: R - rowBase, rowBase, ...(isWeight ? { isBase: R } : {}) },
    );
    dispatch(device, [[kernel, call]]);
    const d = (await g.readF32(dlogp, R)).subarray(rowBase);
    const rows = unpackPpoRows(await g.read(out, R * PPO_ROW_WORDS), R);
    g.destroy();
    kernel.destroy();
    return { dlogp: d, loss: rows.loss.subarray(rowBase), ratio: rows.ratio.subarray(rowBase), kl: rows.kl.subarray(rowBase), clip: rows.clip.subarray(rowBase) };
  });
  const tol = { atol, rtol: 1e-5 };
  expectClose(got.loss, ref.loss, { ...tol, label: `ppoLoss loss ${name}` });
  expectClose(got.dlogp, ref.dlogp, { ...tol, label: `ppoLoss dlogp ${name}` });
  expectClose(got.ratio, ref.ratio, { ...tol, label: `ppoLoss ratio ${name}` });
  expectClose(got.kl, ref.kl, { ...tol, label: `ppoLoss kl ${name}` });
  expectEqualArrays(got.clip, ref.clip, `ppoLoss clip ${name}`);
  return ref;
}

describe('ppoLoss.wgsl matches ppoLossCpu', () => {
  for (const R of edgeSizes(PPO_LOSS_WORKGROUP_SIZE, 1000)) {
    it(`rows = ${R}`, async () => check(inputs(R, R), OPTS, `R=${R}`));
  }
  it('both clip sides and the dual clip are exercised', async () => {
    const ref = await check(inputs(400, 5, 0.6), { ...OPTS, klCoef: 0 }, 'wide');
    expect(ref.clip.includes(-1) && ref.clip.includes(1)).toBe(true);
  });
  it('log-ratios past the +-20 clamp, k past its clamp, weights of 0', async () => {
    const inp = inputs(200, 6, 15);
    const ref = await check(inp, OPTS, 'past clamp');
    expect(ref.ratio.some((r) => r === Math.fround(Math.exp(20))) || ref.ratio.some((r) => r > 1e8)).toBe(true);
  });
  it('clipLow = 1 (no floor), klCoef 0, rowBase offset', async () => {
    await check(inputs(90, 7), { clipLow: 1, clipHigh: 0.2, dualClip: 10, klCoef: 0 }, 'clipLow=1', 17);
  });
  it('IS weights on the policy term only (a rollout correction), minibatch offset', async () => {
    // Weights in (0, 2] as Token-TIS truncates them, some exactly 1; the same tolerance: one more
    // f32 product per row.
    const inp = inputs(300, 9, 0.6);
    const isWeight = Float32Array.from(inp.logp, (_, i) => (i % 5 === 0 ? 1 : Math.min(Math.exp(Math.sin(i)), 2)));
    const ref = await check(inp, OPTS, 'IS weights', 17, undefined, 1e-6, isWeight);
    // The KL term is not weighted: with klCoef alone the loss is the plain one.
    const plain = ppoLossCpu(inp.logp, inp.logpOld, inp.logpRef, Float32Array.from(inp.adv, () => 0), inp.weight, OPTS);
    const weighted = ppoLossCpu(inp.logp, inp.logpOld, inp.logpRef, Float32Array.from(inp.adv, () => 0), inp.weight, OPTS, undefined, isWeight);
    expect(Array.from(weighted.loss)).toEqual(Array.from(plain.loss));
    expect(ref.loss.some((x) => x !== 0)).toBe(true);
  });
  it('GMPO and SeeUPO with IS weights', async () => {
    for (const mode of [2, 3]) {
      const o = { ...MODE_OPTS[mode]!, tp: TP, actionLen: ACTION_LEN, maxTurns: TURNS };
      const inp = trajInputs(23, 140 + mode);
      const isWeight = Float32Array.from(inp.logp, (_, i) => Math.min(Math.exp(Math.cos(i)), 2));
      await check(inp, o, `mode ${mode} IS weights`, 0, seqLogOf(inp, o), 1e-6, isWeight);
    }
  });
  it('ratio exactly 1 everywhere (first epoch)', async () => {
    const inp = inputs(70, 8);
    inp.logp.set(inp.logpOld);
    await check(inp, OPTS, 'on-policy');
  });
});

// ---- ratio modes 1-3 and the KL types ----------------------------------------------------------

const TP = RATIO_TP;
const ACTION_LEN = RATIO_ACTION_LEN;
const TURNS = RATIO_TURNS;
const SEQ_MODE: Record<number, SeqRatioMode> = { 1: 'sequence', 2: 'geometric', 3: 'turn', 4: 'turn', 5: 'sequence', 6: 'sequence', 7: 'sequence' };
const MODE_OPTS: Record<number, PpoLossOptions> = {
  0: { clipLow: 0.2, clipHigh: 0.28, dualClip: 3, klCoef: 0.1 },
  1: { clipLow: 0.05, clipHigh: 0.06, dualClip: 3, klCoef: 0.1, ratioMode: RATIO_MODES.sequence },
  2: { clipLow: 0.1, clipHigh: 0.12, dualClip: 3, klCoef: 0.1, ratioMode: RATIO_MODES.geometric },
  3: { clipLow: 0.05, clipHigh: 0.05, dualClip: 3, klCoef: 0.1, ratioMode: RATIO_MODES.turn, stage: 1 },
  4: { clipLow: 0.05, clipHigh: 0.06, dualClip: 3, klCoef: 0.1, ratioMode: RATIO_MODES.step },
  5: { clipLow: 0.2, clipHigh: 0.2, dualClip: 3, klCoef: 0.1, ratioMode: RATIO_MODES.sft },
  6: { clipLow: 0.2, clipHigh: 0.2, dualClip: 3, klCoef: 0.1, ratioMode: RATIO_MODES.cispo },
  7: { clipLow: 1, clipHigh: 1.05, dualClip: 3, klCoef: 0.1, ratioMode: RATIO_MODES.sapo },
};

function seqLogOf(inp: PpoInputs & { mask: Float32Array }, o: PpoLossOptions): Float32Array | undefined {
  const mode = o.ratioMode ?? 0;
  if (mode === 0) return undefined;
  return seqRatioCpu(inp.mask, inp.logp, inp.logpOld, inp.adv, { mode: SEQ_MODE[mode]!, tp: TP, actionLen: ACTION_LEN, maxTurns: TURNS, clipLow: o.clipLow, clipHigh: o.clipHigh });
}

describe('ppoLoss.wgsl: ratio modes x KL types', () => {
  for (const mode of [0, 1, 2, 3, 4, 5, 6, 7]) {
    for (const klType of [KL_TYPES.k3, KL_TYPES.k1, KL_TYPES.k2]) {
      it(`mode ${mode}, kl ${Object.keys(KL_TYPES)[klType]}: 23 trajectories, then a minibatch from trajectory 5`, async () => {
        const o = { ...MODE_OPTS[mode]!, klType, tp: TP, actionLen: ACTION_LEN, maxTurns: TURNS };
        const inp = trajInputs(23, 100 + mode * 3 + klType);
        const ref = await check(inp, o, `mode ${mode} kl ${klType}`, 0, seqLogOf(inp, o));
        // Cross-entropy (mode 5) never clips; every other mode has clipped and unclipped rows here.
        if (mode === RATIO_MODES.sft || mode === RATIO_MODES.sapo) expect(ref.clip.every((c) => c === 0)).toBe(true);
        else expect(ref.clip.includes(0) && ref.clip.some((c) => c !== 0), `mode ${mode}: clipped and unclipped rows`).toBe(true);
        await check(inp, o, `mode ${mode} kl ${klType} rowBase`, 5 * TP, seqLogOf(inp, o));
      });
    }
  }
  it('SeeUPO: every stage, with other turns giving exactly zero loss and gradient', async () => {
    const inp = trajInputs(11, 120);
    for (let stage = 0; stage < TURNS; stage++) {
      const o = { ...MODE_OPTS[3]!, stage, tp: TP, actionLen: ACTION_LEN, maxTurns: TURNS };
      const ref = await check(inp, o, `turn stage ${stage}`, 0, seqLogOf(inp, o));
      ref.loss.forEach((l, i) => {
        if (Math.floor((i % TP) / ACTION_LEN) !== stage) expect(l).toBe(0);
      });
    }
  });
  for (const mode of [1, 2, 3, 4]) {
    it(`mode ${mode}: log-ratios past the +-20 clamp, k past its clamp`, async () => {
      const o = { ...MODE_OPTS[mode]!, klType: KL_TYPES.k2, tp: TP, actionLen: ACTION_LEN, maxTurns: TURNS };
      const inp = trajInputs(20, 130 + mode, 15);
      await check(inp, o, `mode ${mode} past clamp k2`, 0, seqLogOf(inp, o), 1e-5);
      await check(inp, { ...o, klType: KL_TYPES.k3 }, `mode ${mode} past clamp k3`, 0, seqLogOf(inp, o), 1e-5);
    });
  }
  it('chained on the GPU: ppoLoss.wgsl seqRatio then ppoLoss.wgsl, per minibatch, against the reference chain', async () => {
    const device = await requireGpu();
    const N = 23;
    const inp = trajInputs(N, 140);
    const minibatches = [[0, 9], [9, 23]] as const;
    for (const mode of [1, 2, 3]) {
      const o = { ...MODE_OPTS[mode]!, tp: TP, actionLen: ACTION_LEN, maxTurns: TURNS };
      const seqOpts = { mode: SEQ_MODE[mode]!, tp: TP, actionLen: ACTION_LEN, maxTurns: TURNS, clipLow: o.clipLow, clipHigh: o.clipHigh };
      const S = mode === 3 ? TURNS : 1;
      const refSeq = new Float32Array(N * S);
      const ref = { loss: new Float32Array(N * TP), dlogp: new Float32Array(N * TP), ratio: new Float32Array(N * TP) };
      for (const [n0, n1] of minibatches) {
        const sub = (a: Float32Array) => a.subarray(n0 * TP, n1 * TP);
        seqRatioCpu(sub(inp.mask), sub(inp.logp), sub(inp.logpOld), sub(inp.adv), { ...seqOpts, rowBase: n0 * TP }, refSeq);
        const r = ppoLossCpu(sub(inp.logp), sub(inp.logpOld), sub(inp.logpRef), sub(inp.adv), sub(inp.weight), { ...o, rowBase: n0 * TP }, refSeq);
        ref.loss.set(r.loss, n0 * TP);
        ref.dlogp.set(r.dlogp, n0 * TP);
        ref.ratio.set(r.ratio, n0 * TP);
      }
      const got = await withValidation(device, async () => {
        const g = new Scratch(device);
        const sk = seqRatioKernel.create(device);
        const pk = ppoLossKernel.create(device);
        const [mask, logp, logpOld, logpRef, adv, weight] = [inp.mask, inp.logp, inp.logpOld, inp.logpRef, inp.adv, inp.weight].map((a) => g.upload(a));
        const seqLog = g.empty(N * S);
        const dlogp = g.empty(N * TP);
        const out = g.empty(N * TP * PPO_ROW_WORDS);
        const calls: Parameters<typeof dispatch>[1] = [];
        for (const [n0, n1] of minibatches) {
          const rows = { rowBase: n0 * TP, numRows: (n1 - n0) * TP };
          calls.push([sk, sk.bind({ mask: mask!, logp: logp!, logpOld: logpOld!, adv: adv!, out: seqLog }, { ...seqOpts, ...rows }) as never]);
          calls.push([pk, pk.bind({ logp: logp!, logpOld: logpOld!, logpRef: logpRef!, adv: adv!, weight: weight!, seqLog, dlogp, out }, { ...o, ...rows }) as never]);
        }
        dispatch(device, calls);
        const res = { seq: await g.readF32(seqLog, N * S), dlogp: await g.readF32(dlogp, N * TP), rows: unpackPpoRows(await g.read(out, N * TP * PPO_ROW_WORDS), N * TP) };
        g.destroy();
        sk.destroy();
        pk.destroy();
        return res;
      });
      const tol = { atol: 1e-6, rtol: 1e-5 };
      expectClose(got.seq, refSeq, { ...tol, label: `chained mode ${mode} seqLog` });
      expectClose(got.rows.loss, ref.loss, { ...tol, label: `chained mode ${mode} loss` });
      expectClose(got.dlogp, ref.dlogp, { ...tol, label: `chained mode ${mode} dlogp` });
      expectClose(got.rows.ratio, ref.ratio, { ...tol, label: `chained mode ${mode} ratio` });
    }
  });
});
