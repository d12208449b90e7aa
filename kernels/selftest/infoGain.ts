/**
 * Self-test cases for infoGain.wgsl vs infoGainCpu (as tests/gpu/infoGain.gpu.test.ts): IGPO's
 * information-gain turn rewards from teacher-forced answer log-probs. Tolerance atol 1e-6, rtol 1e-5:
 * each reward is the difference of two exps of f32 means of a few log-probs (a few ulps each). The
 * last turn keeps the outcome the host wrote; log-probs of -1e4 must stay finite.
 */
import { packTrajIn, packTurnIn } from '../advantage/advantage';
import { infoGainCpu, infoGainKernel, type InfoGainType } from '../advantage/infoGain';
import { createRng } from '../rng';
import { dispatch, withScratch, type SelfTestCase } from './harness';

function infoGainCase(N: number, T: number, span: number, igType: InfoGainType, extreme: boolean): SelfTestCase {
  return {
    kernel: infoGainKernel,
    name: `N ${N}, ${T} turns, span ${span}, ${igType}${extreme ? ', log-probs of -1e4' : ''}`,
    run: (device) =>
      withScratch(device, async (s) => {
        const rng = createRng(N * 7 + T);
        const turns = Uint32Array.from({ length: N }, (_, n) => (n % 7 === 0 ? 0 : 1 + rng.int(T)));
        const logp = Float32Array.from({ length: N * T * span }, (_, i) => (extreme && i % 5 === 0 ? -1e4 : -Math.abs(rng.normal()) * 2));
        const outcome = Float32Array.from({ length: N }, () => rng.int(2));
        const expected = infoGainCpu(logp, span, turns, outcome, T, igType);
        const host = new Float32Array(N * T);
        turns.forEach((Tn, n) => Tn > 0 && (host[n * T + Tn - 1] = outcome[n]!));
        const k = s.kernel(infoGainKernel.create(device));
        const turnIn = s.upload(packTurnIn({ turnReward: host }, N, T));
        const trajIn = s.upload(packTrajIn({ reward: outcome, groupStart: new Uint32Array(N), groupSize: new Uint32Array(N).fill(1), turns }));
        dispatch(device, [[k, k.bind({ scoreLogp: s.upload(logp), trajIn, turnIn }, { numTraj: N, maxTurns: T, span, igType })]]);
        const words = await s.readF32(turnIn, 4 * N * T);
        const actual = Float32Array.from({ length: N * T }, (_, i) => words[4 * i]!);
        return [{ output: 'turn rewards', actual, expected, tol: { atol: 1e-6, rtol: 1e-5, why: 'differences of exps of f32 means of a few log-probs' } }];
      }),
  };
}

export const infoGainCases: SelfTestCase[] = [
  infoGainCase(67, 3, 1, 'prob_diff', false),
  infoGainCase(130, 5, 3, 'log_prob_diff', false),
  infoGainCase(40, 4, 2, 'prob_diff', true),
];
