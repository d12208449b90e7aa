/**
 * ppoLoss.wgsl vs ppoLossCpu (kernels/ppoLoss.ts). Tolerances: ratio, loss and dlogp involve one
 * f32 exp of a log-ratio up to 20, so rtol 1e-5 (exp's f32 error grows with its argument: ~1e-6
 * relative at 20) and atol 1e-6 (k3 = exp(k) - k - 1 cancels for small k, an absolute f32 error of
 * ~1e-7). clip must match exactly: a flip needs a log-ratio within 1e-7 of log(1 +- eps), which
 * these seeds do not produce.
 */
import { describe, expect, it } from 'vitest';
import { PPO_LOSS_WORKGROUP_SIZE, ppoLossCpu, ppoLossKernel, unpackPpoRows, PPO_ROW_WORDS, type PpoLossOptions } from '../../kernels/ppoLoss';
import { createRng } from '../../workers/rng';
import { expectClose, expectEqualArrays } from '../helpers/expectClose';
import { GpuScratch, runCalls, withValidation } from '../helpers/gpuBuffers';
import { edgeSizes } from '../helpers/mlpFixture';
import { requireGpu } from '../helpers/requireGpu';

const OPTS: PpoLossOptions = { clipLow: 0.2, clipHigh: 0.28, dualClip: 3, klCoef: 0.1 };

interface Inputs {
  logp: Float32Array;
  logpOld: Float32Array;
  logpRef: Float32Array;
  adv: Float32Array;
  weight: Float32Array;
}

function inputs(R: number, seed: number, spread = 0.4): Inputs {
  const rng = createRng(seed);
  const logpOld = Float32Array.from({ length: R }, () => -Math.abs(rng.normal()) * 3);
  const logp = Float32Array.from(logpOld, (x) => x + rng.normal() * spread);
  const logpRef = Float32Array.from(logpOld, (x) => x + rng.normal() * spread);
  const adv = Float32Array.from({ length: R }, () => (rng.next() < 0.1 ? 0 : rng.normal()));
  const weight = Float32Array.from({ length: R }, () => (rng.next() < 0.2 ? 0 : rng.next() / 10));
  return { logp, logpOld, logpRef, adv, weight };
}

async function check(inp: Inputs, o: PpoLossOptions, name: string, rowBase = 0) {
  const device = await requireGpu();
  const R = inp.logp.length;
  const sub = (a: Float32Array) => a.subarray(rowBase);
  const ref = ppoLossCpu(sub(inp.logp), sub(inp.logpOld), sub(inp.logpRef), sub(inp.adv), sub(inp.weight), o);
  const got = await withValidation(device, async () => {
    const g = new GpuScratch(device);
    const kernel = ppoLossKernel.create(device);
    const dlogp = g.empty(R);
    const out = g.empty(R * PPO_ROW_WORDS);
    const call = kernel.bind(
      {
        logp: g.upload(inp.logp), logpOld: g.upload(inp.logpOld), logpRef: g.upload(inp.logpRef),
        adv: g.upload(inp.adv), weight: g.upload(inp.weight), dlogp, out,
      },
      { ...o, numRows: R - rowBase, rowBase },
    );
    runCalls(device, [[kernel, call]]);
    const d = (await g.readF32(dlogp, R)).subarray(rowBase);
    const rows = unpackPpoRows(await g.read(out, R * PPO_ROW_WORDS), R);
    g.destroy();
    kernel.destroy();
    return { dlogp: d, loss: rows.loss.subarray(rowBase), ratio: rows.ratio.subarray(rowBase), kl: rows.kl.subarray(rowBase), clip: rows.clip.subarray(rowBase) };
  });
  const tol = { atol: 1e-6, rtol: 1e-5 };
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
  it('ratio exactly 1 everywhere (first epoch)', async () => {
    const inp = inputs(70, 8);
    inp.logp.set(inp.logpOld);
    await check(inp, OPTS, 'on-policy');
  });
});
