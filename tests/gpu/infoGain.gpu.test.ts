/**
 * infoGain.wgsl vs infoGainCpu (kernels/advantage/infoGain.ts). Tolerance atol 1e-6, rtol 1e-5: each reward
 * is the difference of two exps of f32 means of at most a few log-probs (a few ulps each). The
 * kernel writes only the turns before each trajectory's last one; the last turn keeps the outcome
 * the host wrote, turns not taken keep 0. Extremes: log-probs of -1e4 (p underflows to 0 in
 * prob_diff, stays finite in log_prob_diff), trajectories with 0 and 1 turns.
 */
import { describe, expect, it } from 'vitest';
import { packTrajIn, packTurnIn } from '../../kernels/advantage/advantage';
import { infoGainCpu, infoGainKernel, type InfoGainType } from '../../kernels/advantage/infoGain';
import { createRng } from '../../workers/core/rng';
import { expectClose } from '../helpers/expectClose';
import { dispatch, Scratch } from '../../kernels/selftest/harness';
import { withValidation } from '../helpers/validation';
import { requireGpu } from '../helpers/requireGpu';

async function check(N: number, T: number, span: number, igType: InfoGainType, seed: number, extreme = false) {
  const device = await requireGpu();
  const rng = createRng(seed);
  const turns = Uint32Array.from({ length: N }, (_, n) => (n % 7 === 0 ? 0 : 1 + rng.int(T)));
  const logp = Float32Array.from({ length: N * T * span }, (_, i) => (extreme && i % 5 === 0 ? -1e4 : -Math.abs(rng.normal()) * 2));
  const outcome = Float32Array.from({ length: N }, () => rng.int(2));
  const ref = infoGainCpu(logp, span, turns, outcome, T, igType);
  // The host's part: the outcome on each last turn.
  const host = new Float32Array(N * T);
  turns.forEach((Tn, n) => Tn > 0 && (host[n * T + Tn - 1] = outcome[n]!));
  const got = await withValidation(device, async () => {
    const g = new Scratch(device);
    const k = infoGainKernel.create(device);
    const turnIn = g.upload(packTurnIn({ turnReward: host }, N, T));
    const trajIn = g.upload(packTrajIn({ reward: outcome, groupStart: new Uint32Array(N), groupSize: new Uint32Array(N).fill(1), turns }));
    dispatch(device, [[k, k.bind({ scoreLogp: g.upload(logp), trajIn, turnIn }, { numTraj: N, maxTurns: T, span, igType })]]);
    const words = await g.readF32(turnIn, 4 * N * T);
    g.destroy();
    k.destroy();
    return Float32Array.from({ length: N * T }, (_, i) => words[4 * i]!);
  });
  expectClose(got, ref, { atol: 1e-6, rtol: 1e-5, label: `infoGain N=${N} T=${T} span=${span} ${igType}` });
  expect(got.every(Number.isFinite)).toBe(true);
}

describe('infoGain.wgsl matches infoGainCpu', () => {
  for (const igType of ['prob_diff', 'log_prob_diff'] as const) {
    it(`${igType}: several shapes`, async () => {
      await check(1, 1, 1, igType, 1);
      await check(67, 3, 1, igType, 2);
      await check(130, 5, 3, igType, 3);
    });
    it(`${igType}: log-probs of -1e4 stay finite`, async () => check(40, 4, 2, igType, 4, true));
  }
});
