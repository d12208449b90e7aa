/**
 * negOutShare.wgsl vs negOutShareCpu (kernels/selftest/negOutShare.ts states the tolerance, 1e-5
 * absolute on a share in [0, 1]), at edge sizes of its one workgroup; and the GPU backend's
 * neg_out_grad_share against the CPU backend's over a few updates with a tolerant clip, off-policy.
 */
import { describe, expect, it } from 'vitest';
import { NEG_OUT_WORKGROUP_SIZE, negOutShareCpu } from '../../kernels/stats/negOutShare';
import { gpuNegOutShare, NEG_OUT_TOL, negOutInputs } from '../../kernels/selftest/negOutShare';
import { defaultConfig, withFieldText } from '../../workers/core/config';
import { createCpuBackend } from '../../workers/core/cpuBackend';
import { createGpuBackend } from '../../workers/core/gpuBackend';
import { createTrainer } from '../../workers/core/trainer';
import { withValidation } from '../helpers/validation';
import { edgeSizes } from '../../kernels/selftest/harness';
import { requireGpu } from '../helpers/requireGpu';

describe('negOutShare.wgsl matches negOutShareCpu', () => {
  for (const n of edgeSizes(NEG_OUT_WORKGROUP_SIZE, 10_000)) {
    it(`${n} rows`, async () => {
      const device = await requireGpu();
      const x = negOutInputs(n);
      const cpu = negOutShareCpu(x);
      const gpu = await withValidation(device, () => gpuNegOutShare(device, x));
      expect(Math.abs(gpu - cpu), `gpu ${gpu} cpu ${cpu}`).toBeLessThanOrEqual(NEG_OUT_TOL.atol);
    });
  }
  it('a batch whose share is known: 0 with every row masked, 1 when only counted rows carry gradient', async () => {
    const device = await requireGpu();
    const x = negOutInputs(1000, 3);
    x.mask.fill(0);
    expect(await gpuNegOutShare(device, x)).toBe(0);
    const y = negOutInputs(1000, 4);
    y.mask.fill(1);
    // Every row A = -1 with log-ratio 0.5 (outside): all the gradient is counted.
    y.adv.fill(-1);
    y.logp.set(y.logpOld.map((l) => l + 0.5));
    expect(await gpuNegOutShare(device, y)).toBe(1);
  });
});

describe('the GPU backend reports the CPU backend\'s neg_out_grad_share', () => {
  it('CISPO, 4 epochs of 2 minibatches, 3 iterations', async () => {
    const device = await requireGpu();
    let cfg = defaultConfig();
    for (const [k, v] of Object.entries({ batch: '8', group: '4', 'model.hidden': '32', methods: 'grpo,cispo', epochs: '4', minibatches: '2', lr: '0.02', seed: '3' })) cfg = withFieldText(cfg, k, v);
    const cpu = await createTrainer(cfg, createCpuBackend);
    const gpu = await createTrainer(cfg, (shape, params) => createGpuBackend(device, shape, params));
    for (let i = 0; i < 3; i++) {
      const [rc, rg] = [await cpu.step(), await gpu.step()];
      // f32 sums in another order, and log-probs that differ in the last bits (a row at a bound could
      // flip sides; none does on this seed).
      expect(Math.abs(rg.neg_out_grad_share - rc.neg_out_grad_share), `iter ${rc.iter}: gpu ${rg.neg_out_grad_share} cpu ${rc.neg_out_grad_share}`).toBeLessThanOrEqual(1e-4);
      if (i > 0) expect(rc.neg_out_grad_share).toBeGreaterThan(0);
    }
  });
});
