/** The sampler-mismatch metrics (kernels/stats/mismatchStats.ts) against verl's formulas (kernels/stats/mismatch.ts). */
import { describe, expect, it } from 'vitest';
import { offpolicyMetrics } from '../../kernels/stats/mismatch';
import { mismatchStatsCpu } from '../../kernels/stats/mismatchStats';
import { mismatchInputs } from '../../kernels/selftest/mismatchStats';

describe('mismatchStatsCpu', () => {
  it('is verl\'s compute_offpolicy_metrics where nothing is clamped', () => {
    const x = mismatchInputs(40, 6, 2);
    // Within the clamp, and every trajectory with a token (verl's batch has no empty rows).
    for (let i = 0; i < x.mask.length; i++) {
      x.logpOld[i] = x.logpRollout[i]! + Math.max(Math.min(x.logpOld[i]! - x.logpRollout[i]!, 2), -2);
      if (i % x.Tp === 0) x.mask[i] = 1;
    }
    const m = mismatchStatsCpu(x);
    const v = offpolicyMetrics(x.logpOld, Float32Array.from(x.logpRollout), x.mask, x.Tp);
    const close = (a: number, b: number) => expect(Math.abs(a - b), `${a} vs ${b}`).toBeLessThanOrEqual(1e-12 + 1e-7 * Math.abs(b));
    close(m.mismatch_logratio, -v.kl);
    close(m.mismatch_k3_kl, v.k3_kl);
    close(m.mismatch_chi2_token, v.chi2_token);
    close(m.mismatch_chi2_seq, v.chi2_seq);
    close(m.mismatch_ppl_ratio, v.ppl_ratio);
  });

  it('a hand case: one trajectory, log-ratios 0.5 and -0.5', () => {
    const m = mismatchStatsCpu({ mask: [1, 1, 0], logpOld: [-1, -2, -3], logpRollout: [-1.5, -1.5, 0], Tp: 3 });
    expect(m.mismatch_logratio).toBe(0);
    expect(m.mismatch_k3_kl).toBeCloseTo((Math.exp(0.5) - 1.5 + Math.exp(-0.5) - 0.5) / 2, 12);
    expect(m.mismatch_chi2_token).toBeCloseTo((Math.exp(1) + Math.exp(-1)) / 2 - 1, 12);
    expect(m.mismatch_chi2_seq).toBe(0);
    expect(m.mismatch_ppl_ratio).toBe(1);
    expect(m.mismatch_hist.reduce((a, b) => a + b, 0)).toBe(2);
  });

  it('no tokens: zeros and a ratio of 1', () => {
    const m = mismatchStatsCpu({ mask: [0, 0], logpOld: [-1, -2], logpRollout: [0, 0], Tp: 2 });
    expect([m.mismatch_logratio, m.mismatch_k3_kl, m.mismatch_chi2_token, m.mismatch_chi2_seq, m.mismatch_ppl_ratio]).toEqual([0, 0, 0, 0, 1]);
  });
});
