/** ARLArena's diagnosis, neg_out_grad_share (kernels/stats/negOutShare.ts), on hand-computed batches. */
import { describe, expect, it } from 'vitest';
import { ppoLossCpu, RATIO_MODES } from '../../kernels/loss/ppoLoss';
import { NEG_OUT_LOG_BOUNDS, negOutShareCpu } from '../../kernels/stats/negOutShare';
import { defaultConfig, withFieldText } from '../../workers/core/config';
import { createCpuBackend } from '../../workers/core/cpuBackend';
import { createTrainer } from '../../workers/core/trainer';

const f32 = (xs: number[]) => Float32Array.from(xs);

describe('neg_out_grad_share', () => {
  it('counts |dlogp| of masked, negative-advantage rows outside [0.8, 1.2] over all masked |dlogp|', () => {
    // Rows: A < 0 outside high (counts), A < 0 inside, A > 0 outside, masked out (ignored, large),
    // A < 0 outside low (counts), A = 0 outside with no gradient.
    const lam = [0.5, 0.1, 0.5, -0.5, -0.3, 0.9];
    const x = {
      mask: f32([1, 1, 1, 0, 1, 1]),
      adv: f32([-1, -1, 1, -1, -2, 0]),
      logpOld: f32([-1, -1, -1, -1, -1, -1]),
      logp: f32(lam.map((l) => -1 + l)),
      dlogp: f32([-0.3, 0.2, 0.4, 5, 0.1, 0]),
    };
    // (0.3 + 0.1) / (0.3 + 0.2 + 0.4 + 0.1)
    expect(negOutShareCpu(x)).toBeCloseTo(0.4, 6);
  });
  it('the bounds themselves are inside; no masked row or no gradient gives 0', () => {
    const at = (l: number) => negOutShareCpu({ mask: f32([1]), adv: f32([-1]), logpOld: f32([0]), logp: f32([l]), dlogp: f32([1]) });
    expect(at(NEG_OUT_LOG_BOUNDS[0])).toBe(0);
    expect(at(NEG_OUT_LOG_BOUNDS[1])).toBe(0);
    expect(at(Math.fround(NEG_OUT_LOG_BOUNDS[1] + 1e-6))).toBe(1);
    expect(negOutShareCpu({ mask: f32([0, 0]), adv: f32([-1, -1]), logpOld: f32([0, 0]), logp: f32([1, 1]), dlogp: f32([1, 1]) })).toBe(0);
    expect(negOutShareCpu({ mask: f32([1]), adv: f32([-1]), logpOld: f32([0]), logp: f32([1]), dlogp: f32([0]) })).toBe(0);
  });
  it('tells a tolerant clip from a hard one: CISPO keeps the gradient the token clip removes', () => {
    // Row 0: A = -1 with ratio e^-0.5 < 0.8, which PPO's clip zeroes; row 1: A = 1 on-policy.
    const logp = f32([-0.5, 0]);
    const old = f32([0, 0]);
    const adv = f32([-1, 1]);
    const w = f32([1, 1]);
    const o = { clipLow: 0.2, clipHigh: 0.2, dualClip: 3, klCoef: 0 };
    const share = (ratioMode: number) => negOutShareCpu({ mask: f32([1, 1]), adv, logp, logpOld: old, dlogp: ppoLossCpu(logp, old, old, adv, w, { ...o, ratioMode }).dlogp });
    expect(share(RATIO_MODES.token)).toBe(0);
    // CISPO: weight clip(e^-0.5) = 0.8, so |dlogp| = 0.8 against 1.
    expect(share(RATIO_MODES.cispo)).toBeCloseTo(0.8 / 1.8, 6);
  });
  it('is in every metrics row, in [0, 1], and 0 on the first epoch of a one-epoch run (ratios are 1)', async () => {
    let cfg = defaultConfig();
    for (const [k, v] of Object.entries({ batch: '4', group: '4', 'model.hidden': '16', methods: 'grpo,cispo' })) cfg = withFieldText(cfg, k, v);
    const one = await createTrainer(cfg, createCpuBackend);
    expect((await one.step()).neg_out_grad_share).toBe(0);
    const four = await createTrainer(withFieldText(withFieldText(cfg, 'epochs', '4'), 'lr', '0.05'), createCpuBackend);
    const rows = [await four.step(), await four.step()];
    for (const r of rows) {
      expect(r.neg_out_grad_share).toBeGreaterThanOrEqual(0);
      expect(r.neg_out_grad_share).toBeLessThanOrEqual(1);
    }
    expect(Math.max(...rows.map((r) => r.neg_out_grad_share))).toBeGreaterThan(0);
  });
});
