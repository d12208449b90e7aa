/**
 * The rollout sampler inside real training iterations, GPU backend against CPU backend: the same
 * config with bf16 logits, top-p 0.8, and fp16 with top-k 3, three iterations each.
 * - Sampling: the same tokens (the rollouts' rewards and token counts are identical).
 * - The stats path: the GPU row's mismatch metrics are mismatchStatsCpu of the GPU's own batch
 *   tensors within the kernel's tolerance (kernels/selftest/mismatchStats.ts), the histogram exact.
 * - Log-probs: the trainer's (logpOld) agree within a few f32 roundings of terms of size ~1 (2e-6
 *   absolute, 1e-5 relative): the backends sum in different orders and the parameters drift apart
 *   by f32 noise over the updates. The sampler's do too, except where rounding is discontinuous:
 *   a logit within that noise of a bf16 or fp16 rounding midpoint rounds to neighbouring values
 *   on the two backends, and a token within it of a top-k or top-p boundary is kept on one only,
 *   which moves the row's sampler log-probs by up to a half-precision ulp of a logit (bf16: 2^-8
 *   relative) or that token's share of the mass. Such rows are rare (none on iteration 1 here,
 *   one token in 74 on the third fp16 iteration): at most 5 % of the tokens may differ, by < 0.1.
 */
import { describe, expect, it } from 'vitest';
import { MISMATCH_FIELDS, mismatchStatsCpu } from '../../kernels/stats/mismatchStats';
import { MISMATCH_TOL } from '../../kernels/selftest/mismatchStats';
import { defaultConfig, withFieldText } from '../../workers/core/config';
import { createCpuBackend } from '../../workers/core/cpuBackend';
import { createGpuBackend } from '../../workers/core/gpuBackend';
import { createTrainer } from '../../workers/core/trainer';
import { expectClose } from '../helpers/expectClose';
import { requireGpu } from '../helpers/requireGpu';

const CASES: Array<[string, Record<string, string>]> = [
  ['bf16 logits', { 'rollout.precision': 'bf16' }],
  ['top-p 0.8', { 'rollout.topP': '0.8' }],
  ['fp16, top-k 3, 2 epochs', { 'rollout.precision': 'fp16', 'rollout.topK': '3', epochs: '2' }],
];

describe('the rollout sampler in a training iteration: GPU backend as the CPU backend', () => {
  for (const [name, set] of CASES) {
    it(name, async () => {
      const device = await requireGpu();
      let cfg = defaultConfig();
      for (const [k, v] of Object.entries({ batch: '4', group: '4', 'model.hidden': '32', seed: '3', ...set })) cfg = withFieldText(cfg, k, v);
      const cpu = await createTrainer(cfg, createCpuBackend);
      const gpu = await createTrainer(cfg, (shape, params) => createGpuBackend(device, shape, params));
      try {
        for (let i = 0; i < 3; i++) {
          const [rc, rg] = [await cpu.step(), await gpu.step()];
          const at = `iter ${rc.iter}`;
          expect(rg.reward_mean, `${at} reward_mean`).toBe(rc.reward_mean);
          expect(rg.tokens, `${at} tokens`).toBe(rc.tokens);
          const [bg, bc] = [await gpu.backend.readBatch(), await cpu.backend.readBatch()];
          const mask = cpu.lastBatch!.mask;
          const own = mismatchStatsCpu({ mask, logpOld: bg.logpOld, logpRollout: bg.logpRollout, Tp: gpu.shape.Tp });
          expectClose(MISMATCH_FIELDS.map((f) => rg[f]), MISMATCH_FIELDS.map((f) => own[f]), { atol: MISMATCH_TOL.atol, rtol: MISMATCH_TOL.rtol, label: `${at} mismatch of the GPU's batch` });
          expect(rg.mismatch_hist, `${at} histogram`).toEqual(own.mismatch_hist);
          const on = (a: Float32Array) => a.filter((_, k) => mask[k] !== 0);
          expectClose(on(bg.logpOld), on(bc.logpOld), { atol: 2e-6, rtol: 1e-5, label: `${at} logpOld` });
          const [rg1, rc1] = [on(bg.logpRollout), on(bc.logpRollout)];
          const off = [...rg1.keys()].filter((k) => Math.abs(rg1[k]! - rc1[k]!) > 2e-6 + 1e-5 * Math.abs(rc1[k]!));
          expect(off.length, `${at}: ${off.length} of ${rg1.length} rollout log-probs differ`).toBeLessThanOrEqual(Math.max(1, 0.05 * rg1.length));
          for (const k of off) expect(Math.abs(rg1[k]! - rc1[k]!)).toBeLessThan(0.1);
          console.log(`${name} ${at}: ${MISMATCH_FIELDS.map((f) => `${f} gpu ${rg[f].toPrecision(5)} cpu ${rc[f].toPrecision(5)}`).join(', ')}; ratio_mean ${rg.ratio_mean} / ${rc.ratio_mean}; rollout log-probs off ${off.length}/${rg1.length}`);
        }
      } finally {
        gpu.backend.destroy();
        cpu.backend.destroy();
      }
    });
  }
});
