/**
 * Self-test cases for PPO's critic kernels (as tests/gpu/critic.gpu.test.ts): gae.wgsl vs gaeCpu
 * and criticUpdate.wgsl vs criticUpdateCpu. Tolerances: GAE is an f32 recursion the reference
 * rounds step by step the same way, so only fused multiply-adds differ: atol 1e-6, rtol 1e-5; the
 * critic's update is a mean of up to a few hundred f32 returns against a float64 one: atol 1e-6,
 * rtol 1e-5.
 */
import { packTrajIn } from '../advantage';
import { criticUpdateCpu, criticUpdateKernel, gaeCpu, gaeKernel } from '../critic';
import { createRng } from '../../workers/rng';
import { dispatch, withScratch, type SelfTestCase } from './harness';

function inputs(N: number, tp: number, size: number, seed: number) {
  const rng = createRng(seed);
  const mask = Float32Array.from({ length: N * tp }, () => (rng.next() < 0.8 ? 1 : 0));
  const keys = Uint32Array.from({ length: N * tp }, () => rng.int(size));
  const critic = Float32Array.from({ length: size }, () => rng.normal() * 0.5);
  const reward = Float32Array.from({ length: N }, () => rng.int(2));
  return { mask, keys, critic, reward };
}

function gaeCase(N: number, tp: number, gamma: number, lambda: number): SelfTestCase {
  return {
    kernel: gaeKernel,
    uses: [criticUpdateKernel],
    name: `N ${N}, ${tp} rows, gamma ${gamma}, lambda ${lambda}; then the critic's update`,
    run: (device) =>
      withScratch(device, async (s) => {
        const size = 64;
        const { mask, keys, critic, reward } = inputs(N, tp, size, N + tp);
        const ref = gaeCpu(critic, keys, mask, reward, tp, { gamma, lambda });
        const updated = Float32Array.from(critic);
        criticUpdateCpu(updated, keys, mask, ref.ret, 0.3);
        const g = s.kernel(gaeKernel.create(device));
        const u = s.kernel(criticUpdateKernel.create(device));
        const criticBuf = s.upload(critic);
        const adv = s.empty(N * tp);
        const ret = s.empty(N * tp);
        const stateKey = s.upload(keys);
        const maskBuf = s.upload(mask);
        const trajIn = s.upload(packTrajIn({ reward, groupStart: new Uint32Array(N), groupSize: new Uint32Array(N).fill(1), turns: new Uint32Array(N).fill(1) }));
        dispatch(device, [
          [g, g.bind({ critic: criticBuf, stateKey, mask: maskBuf, trajIn, adv, ret }, { numTraj: N, tp, gamma, lambda })],
          [u, u.bind({ stateKey, mask: maskBuf, ret, critic: criticBuf }, { tableSize: size, numRows: N * tp, lr: 0.3 })],
        ]);
        const tol = { atol: 1e-6, rtol: 1e-5, why: 'f32 recursion rounded the same way step by step; fused multiply-adds differ' };
        return [
          { output: 'advantages', actual: await s.readF32(adv, N * tp), expected: ref.adv, tol },
          { output: 'returns', actual: await s.readF32(ret, N * tp), expected: ref.ret, tol },
          { output: 'critic after the update', actual: await s.readF32(criticBuf, size), expected: updated, tol: { atol: 1e-6, rtol: 1e-5, why: 'an f32 mean of up to a few hundred returns' } },
        ];
      }),
  };
}

export const criticCases: SelfTestCase[] = [gaeCase(67, 9, 1, 1), gaeCase(130, 6, 0.95, 0.9)];
