/** The kernels' CPU references on cases worked by hand, and at the extremes. */
import { describe, expect, it } from 'vitest';
import { adamCpu, clipScale, gradNormCpu } from '../../kernels/optimizer/adam';
import { grpoAdvantageCpu } from '../../kernels/advantage/advantage';
import { essScaleCpu } from '../../kernels/optimizer/essScale';
import { MASKED_LOGIT, safeTanh } from '../../kernels/model/mlp';
import { ppoLossCpu } from '../../kernels/loss/ppoLoss';
import { sampleCpu } from '../../kernels/softmax/sample';
import { advZeroEdges } from '../../kernels/selftest/stats';
import { histBin, statsCpu } from '../../kernels/stats/stats';
import { tokenStatsCpu } from '../../kernels/softmax/tokenStats';
import { aggregationWeights, minibatchRanges } from '../../workers/core/lossAgg';
import { LOSS_AGG_MODES, type LossAgg } from '../../workers/core/config';
import { createRng } from '../../workers/core/rng';
import { expectClose, expectSameBits } from '../helpers/expectClose';
import { rowLse } from '../../kernels/softmax/logitGrad';

const f32 = (xs: number[]) => Float32Array.from(xs);
// References compute in f64 and store f32: 1e-6 relative is f32 storage rounding with margin.
const TOL = { atol: 1e-6, rtol: 1e-6 };

describe('tokenStatsCpu', () => {
  it('log-prob, entropy and sum p^2 of probabilities [1/4, 1/2, 1/4], with a masked token', () => {
    const z = f32([0, Math.log(2), 0, MASKED_LOGIT]);
    const s = tokenStatsCpu(z, 4, Int32Array.from([1]), Uint32Array.from([0]));
    expectClose(s.logp, [Math.log(0.5)], TOL);
    expectClose(s.entropy, [-(0.25 * Math.log(0.25) * 2 + 0.5 * Math.log(0.5))], TOL);
    expectClose(s.sumP2, [0.375], TOL);
  });

  it('stays finite with logits of +-1e4 and one dominant token', () => {
    const z = f32([1e4, 0, -1e4]);
    const s = tokenStatsCpu(z, 3, Int32Array.from([0, 1]), Uint32Array.from([0]));
    expect(s.logp[0]).toBe(0);
    expect(s.entropy[0]).toBeCloseTo(0, 6);
    expect(s.sumP2[0]).toBeCloseTo(1, 6);
    const t = tokenStatsCpu(z, 3, Int32Array.from([1]), Uint32Array.from([0]));
    expect(t.logp[0]).toBe(-1e4);
  });
});

describe('sampleCpu', () => {
  it('never samples a masked token and follows the probabilities', () => {
    const V = 4;
    const R = 4000;
    const z = new Float32Array(R * V);
    for (let r = 0; r < R; r++) z.set([Math.log(3), 0, MASKED_LOGIT, 0], r * V);
    const seq = new Int32Array(R);
    sampleCpu(z, V, Uint32Array.from({ length: R }, (_, i) => i), seq, 3, 1);
    const counts = [0, 0, 0, 0];
    for (const t of seq) counts[t]!++;
    expect(counts[2]).toBe(0);
    expect(counts[0]! / R).toBeCloseTo(0.6, 1);
    expect(counts[1]! / R).toBeCloseTo(0.2, 1);
  });
});

describe('grpoAdvantageCpu', () => {
  const o = { group: 4, scaleStd: true, unbiasedStd: true, eps: 1e-6 };
  it('one success in four: unbiased std 0.5 gives [1.5, -0.5, -0.5, -0.5], broadcast over tokens and masked', () => {
    const adv = grpoAdvantageCpu(f32([1, 0, 0, 0]), f32([1, 1, 1, 0, 1, 1, 1, 1]), 2, o);
    expectClose(adv, [1.5, 1.5, -0.5, 0, -0.5, -0.5, -0.5, -0.5], { atol: 1e-5, rtol: 1e-5 });
  });
  it('population std and no std scaling (Dr. GRPO)', () => {
    const pop = grpoAdvantageCpu(f32([1, 0, 0, 0]), f32([1, 1, 1, 1]), 1, { ...o, unbiasedStd: false });
    expect(pop[0]).toBeCloseTo(0.75 / Math.sqrt(0.1875), 5);
    const dr = grpoAdvantageCpu(f32([1, 0, 0, 0]), f32([1, 1, 1, 1]), 1, { ...o, scaleStd: false });
    expectClose(dr, [0.75, -0.25, -0.25, -0.25], TOL);
  });
  it('Advantage Collapse: all-equal rewards give exactly zero advantages', () => {
    for (const r of [0, 1]) {
      const adv = grpoAdvantageCpu(f32([r, r, r, r]), f32([1, 1, 1, 1]), 1, o);
      expect(Array.from(adv)).toEqual([0, 0, 0, 0]);
    }
  });
  it('a group of size 1 uses mean 0 and std 1 (verl)', () => {
    expectClose(grpoAdvantageCpu(f32([1, 0]), f32([1, 1]), 1, { ...o, group: 1 }), [1, 0], { atol: 2e-6, rtol: 0 });
  });
});

describe('ppoLossCpu', () => {
  const o = { clipLow: 0.2, clipHigh: 0.2, dualClip: 3, klCoef: 0 };
  const run = (A: number, logRatio: number, w = 1, extra = {}) =>
    ppoLossCpu(f32([logRatio]), f32([0]), f32([logRatio]), f32([A]), f32([w]), { ...o, ...extra });

  it('on-policy: loss -A, gradient -A, not clipped', () => {
    const r = run(2, 0);
    expect(r.loss[0]).toBeCloseTo(-2, 6);
    expect(r.dlogp[0]).toBeCloseTo(-2, 6);
    expect(r.clip[0]).toBe(0);
    expect(r.ratio[0]).toBe(1);
  });
  it('A > 0 and ratio 1.5 > 1.2: clipped high, loss -1.2 A, zero gradient', () => {
    const r = run(1, Math.log(1.5));
    expect(r.loss[0]).toBeCloseTo(-1.2, 6);
    expect(r.dlogp[0]).toBe(0);
    expect(r.clip[0]).toBe(1);
  });
  it('A < 0 and ratio 0.5 < 0.8: clipped low, loss 0.8 |A|', () => {
    const r = run(-1, Math.log(0.5));
    expect(r.loss[0]).toBeCloseTo(0.8, 6);
    expect(r.dlogp[0]).toBe(0);
    expect(r.clip[0]).toBe(-1);
  });
  it('dual clip: A < 0 and ratio 4 > c = 3 caps the loss at 3 |A|', () => {
    const r = run(-1, Math.log(4));
    expect(r.loss[0]).toBeCloseTo(3, 6);
    expect(r.dlogp[0]).toBe(0);
    expect(r.clip[0]).toBe(1);
  });
  it('A < 0 inside the dual-clip cap keeps the gradient -A r', () => {
    const r = run(-1, Math.log(2));
    expect(r.loss[0]).toBeCloseTo(2, 6);
    expect(r.dlogp[0]).toBeCloseTo(2, 6);
  });
  it('log-ratios past the +-20 clamp stay finite', () => {
    for (const lr of [50, -50, 1e4]) {
      const r = run(1, lr);
      expect(Number.isFinite(r.loss[0])).toBe(true);
      expect(Number.isFinite(r.ratio[0])).toBe(true);
      expect(r.ratio[0]).toBeLessThanOrEqual(Math.fround(Math.exp(20)));
    }
  });
  it('k3 KL: value pi_ref/pi - log(pi_ref/pi) - 1 and gradient 1 - pi_ref/pi', () => {
    const r = ppoLossCpu(f32([Math.log(0.5)]), f32([Math.log(0.5)]), f32([Math.log(0.25)]), f32([0]), f32([1]), { ...o, klCoef: 0.1 });
    const k3 = 0.5 - Math.log(0.5) - 1;
    expect(r.kl[0]).toBeCloseTo(k3, 6);
    expect(r.loss[0]).toBeCloseTo(0.1 * k3, 6);
    expect(r.dlogp[0]).toBeCloseTo(0.1 * 0.5, 6);
  });
  it('weights scale loss and gradient; weight 0 (masked) contributes nothing', () => {
    const r = run(1, 0, 0.25);
    expect(r.loss[0]).toBeCloseTo(-0.25, 6);
    expect(Math.abs(run(1, 0.1, 0).dlogp[0]!)).toBe(0);
  });
});

describe('Adam and gradient clipping', () => {
  it('the first Adam step moves each parameter by about lr against its gradient', () => {
    const p = f32([1, 1, 1]);
    const g = f32([0.5, -2, 0]);
    adamCpu(p, g, new Float32Array(3), new Float32Array(3), gradNormCpu(g), { lr: 0.1, beta1: 0.9, beta2: 0.999, eps: 1e-8, step: 1, maxGradNorm: 0 });
    expectClose(p, [0.9, 1.1, 1], { atol: 1e-6, rtol: 0 });
  });
  it('the same bits as the formula written out with the moments read back from their f32 arrays', () => {
    // adamCpu keeps the options in locals and rounds the moments itself: nothing may change.
    const rng = createRng(7);
    const n = 257;
    const p = new Float32Array(n).map(() => rng.normal());
    const g = new Float32Array(n).map((_, i) => (i % 5 === 0 ? 0 : rng.normal() * 10 ** ((i % 7) - 3)));
    const m = new Float32Array(n).map(() => rng.normal() * 0.1);
    const v = new Float32Array(n).map(() => rng.next() * 0.01);
    const o = { lr: 0.013, beta1: 0.9, beta2: 0.999, eps: 1e-8, step: 7, maxGradNorm: 1 };
    const [p2, m2, v2] = [p.slice(), m.slice(), v.slice()];
    const norm = gradNormCpu(g);
    const s = clipScale(norm, o.maxGradNorm);
    for (let i = 0; i < n; i++) {
      const gi = g[i]! * s;
      m2[i] = o.beta1 * m2[i]! + (1 - o.beta1) * gi;
      v2[i] = o.beta2 * v2[i]! + (1 - o.beta2) * gi * gi;
      p2[i] = p2[i]! - (o.lr * (m2[i]! / (1 - o.beta1 ** o.step))) / (Math.sqrt(v2[i]! / (1 - o.beta2 ** o.step)) + o.eps);
    }
    expect(adamCpu(p, g, m, v, norm, o)).toBe(true);
    expectSameBits(p, p2, 'params');
    expectSameBits(m, m2, 'm');
    expectSameBits(v, v2, 'v');
  });
  it('clips the global norm to maxGradNorm', () => {
    expect(gradNormCpu(f32([3, 4]))).toBe(5);
    expect(clipScale(5, 1)).toBeCloseTo(0.2, 6);
    expect(clipScale(0.5, 1)).toBe(1);
    expect(clipScale(1e9, 0)).toBe(1);
  });
});

describe('row log-sum-exp', () => {
  // rowLse skips masked logits once some logit is above MASKED_LOGIT: every row must give what the
  // plain sum over all of them gives, bit for bit.
  const plain = (z: Float32Array): number => {
    let m = -Infinity;
    for (const x of z) m = Math.max(m, x);
    let s = 0;
    for (const x of z) s += Math.exp(x - m);
    return m + Math.log(s);
  };
  const M = MASKED_LOGIT;
  const rows: Array<[string, number[]]> = [
    ['some masked', [0.3, M, -2, M, 1.7, M]],
    ['every logit masked', [M, M, M]],
    ['one allowed', [M, M, -40, M]],
    ['none masked', [1, 2, 3]],
    ['allowed far below 0', [-1e20, M, -3e20]],
    ['a NaN', [0.5, M, NaN]],
    ['+Infinity', [0.5, M, Infinity]],
    ['-Infinity and masked', [-Infinity, M, 0.25]],
    ['only -Infinity and masked', [-Infinity, M]],
    ['empty', []],
  ];
  for (const [what, row] of rows) {
    it(what, () => {
      const z = Float32Array.from([9, ...row, 9]);
      expect(Object.is(rowLse(z, 1, row.length), plain(z.subarray(1, 1 + row.length))), `${rowLse(z, 1, row.length)} vs ${plain(z.subarray(1, 1 + row.length))}`).toBe(true);
    });
  }
});

describe('loss aggregation weights', () => {
  const mask = f32([1, 1, 0, 1, 0, 0]);
  const mb = minibatchRanges(2, 1);
  it('token-mean, seq-mean-token-mean, seq-mean-token-sum, seq-mean-token-sum-norm', () => {
    expectClose(aggregationWeights(mask, 3, mb, 'token-mean'), [1 / 3, 1 / 3, 0, 1 / 3, 0, 0], TOL);
    expectClose(aggregationWeights(mask, 3, mb, 'seq-mean-token-mean'), [0.25, 0.25, 0, 0.5, 0, 0], TOL);
    expectClose(aggregationWeights(mask, 3, mb, 'seq-mean-token-sum'), [0.5, 0.5, 0, 0.5, 0, 0], TOL);
    expectClose(aggregationWeights(mask, 3, mb, 'seq-mean-token-sum-norm'), [1 / 6, 1 / 6, 0, 1 / 6, 0, 0], TOL);
  });
  it('an empty mask gives zero weights, never NaN', () => {
    expect(Array.from(aggregationWeights(new Float32Array(6), 3, mb, 'token-mean'))).toEqual([0, 0, 0, 0, 0, 0]);
  });
  it('rows as steps (GiGPO/SAMPO): each turn with a policy token is a sequence of its own', () => {
    // One minibatch of two trajectories, Tp 4 = 2 turns x 2 rows. Masks [1 1 | 1 0] and [1 0 | 0 0]:
    // steps of lengths 2, 1, 1 (the fourth has none). seq-mean-token-mean: 1 / (3 steps x length).
    const m = Float32Array.from([1, 1, 1, 0, 1, 0, 0, 0]);
    expectClose(aggregationWeights(m, 4, [[0, 2]], 'seq-mean-token-mean', undefined, 2), [1 / 6, 1 / 6, 1 / 3, 0, 1 / 3, 0, 0, 0], TOL);
    // Per trajectory the same rows weigh 1 / (2 x 3) and 1 / (2 x 1).
    expectClose(aggregationWeights(m, 4, [[0, 2]], 'seq-mean-token-mean'), [1 / 6, 1 / 6, 1 / 6, 0, 1 / 2, 0, 0, 0], TOL);
    // token-mean does not depend on what a sequence is.
    expect(Array.from(aggregationWeights(m, 4, [[0, 2]], 'token-mean', undefined, 2))).toEqual(Array.from(aggregationWeights(m, 4, [[0, 2]], 'token-mean')));
    expect(() => aggregationWeights(m, 4, [[0, 2]], 'token-mean', undefined, 3)).toThrow(/does not divide/);
  });
  // The per-row formula (docs/METHODS.md 1.3) as it was first written: lossAgg.ts now works each
  // trajectory's weight out once; the weights must be the same numbers.
  function perRowWeights(mask: Float32Array, Tp: number, minibatches: Array<[number, number]>, mode: LossAgg, mult?: Float32Array): Float32Array {
    const w = new Float32Array(mask.length);
    const c = (n: number) => (mult ? mult[n]! : 1);
    for (const [n0, n1] of minibatches) {
      let seqs = 0;
      let total = 0;
      for (let n = n0; n < n1; n++) {
        let len = 0;
        for (let j = 0; j < Tp; j++) len += mask[n * Tp + j]!;
        if (len > 0) seqs += c(n);
        total += c(n) * len;
      }
      for (let n = n0; n < n1; n++) {
        let len = 0;
        for (let j = 0; j < Tp; j++) len += mask[n * Tp + j]!;
        for (let j = 0; j < Tp; j++) {
          const i = n * Tp + j;
          if (!mask[i] || !c(n)) continue;
          if (mode === 'token-mean') w[i] = c(n) / Math.max(total, 1);
          else if (mode === 'seq-mean-token-mean') w[i] = c(n) / (Math.max(seqs, 1) * Math.max(len, 1));
          else if (mode === 'seq-mean-token-sum') w[i] = c(n) / Math.max(seqs, 1);
          else w[i] = c(n) / (Math.max(seqs, 1) * Tp);
        }
      }
    }
    return w;
  }
  it('equal, bit for bit, to the per-row formula: every mode, 1-5 minibatches, PF-PPO multiplicities with zeros', () => {
    const rng = createRng(7);
    let cases = 0;
    for (const Tp of [1, 9, 24]) {
      for (const M of [1, 2, 5]) {
        for (const withMult of [false, true]) {
          const N = 37;
          const mask = Float32Array.from({ length: N * Tp }, () => (rng.next() < 0.7 ? 1 : 0));
          mask.fill(0, 3 * Tp, 5 * Tp); // trajectories without a policy token
          const mult = withMult ? Float32Array.from({ length: N }, () => rng.int(4)) : undefined;
          for (const mode of LOSS_AGG_MODES) {
            const mb = minibatchRanges(N, M);
            expect(Array.from(aggregationWeights(mask, Tp, mb, mode, mult)), `${mode} Tp ${Tp} M ${M} mult ${withMult}`).toEqual(Array.from(perRowWeights(mask, Tp, mb, mode, mult)));
            cases++;
          }
        }
      }
    }
    expect(cases).toBe(72);
  });
  it('minibatches split trajectories into contiguous ranges', () => {
    expect(minibatchRanges(10, 3)).toEqual([[0, 3], [3, 6], [6, 10]]);
    expect(minibatchRanges(2, 8)).toEqual([[0, 1], [1, 2]]);
  });
});

describe('essScaleCpu', () => {
  it('takes a million trajectories (their maximum by a loop, not spread onto the stack)', () => {
    const N = 1_000_000;
    const len = new Float32Array(N).fill(3);
    const logIS = new Float32Array(N).fill(0.25);
    logIS[N - 1] = 0.25 + Math.log(2);
    const [rho, lr] = essScaleCpu({ len, logIS }, { enabled: true, rule: 'linear', rhoBase: 0.5 });
    // ESS = (sum w)^2 / sum w^2 with N - 1 weights 1 and one weight 2.
    // 1e-9: the float32 log-weight of 2 and a million float64 additions.
    expect(rho).toBeCloseTo((N + 1) ** 2 / (N + 3) / N, 9);
    expect(lr).toBe(1);
    // A NaN weight still gives NaN, as Math.max(...live) did.
    logIS[7] = NaN;
    expect(essScaleCpu({ len, logIS }, { enabled: true, rule: 'linear', rhoBase: 0.5 })[0]).toBeNaN();
  });
});

describe('statsCpu', () => {
  it('masked statistics, all-equal groups, ESS and histograms on a hand case', () => {
    const s = statsCpu({
      mask: f32([1, 1, 0, 1]),
      adv: f32([1, 1, 0, 0]),
      logp: f32([0, 0, 0, Math.log(2)]),
      logpOld: f32([0, 0, 0, 0]),
      entropy: f32([1, 2, 9, 3]),
      kl: f32([0, 0, 0, 0.3]),
      clip: Int32Array.from([0, 1, 0, -1]),
      loss: f32([0.1, 0.2, 0, 0.3]),
      rewards: f32([1, 1]),
      groupStart: Uint32Array.of(0, 1),
      groupSize: Uint32Array.of(1, 1),
      turns: Uint32Array.of(1, 1),
      Tp: 2,
      minibatches: 2,
    });
    expect(s.tokens).toBe(3);
    expect(s.adv_mean).toBeCloseTo(2 / 3, 6);
    expect(s.adv_zero_frac).toBeCloseTo(1 / 3, 6);
    expect(s.ratio_max).toBeCloseTo(2, 6);
    expect(s.ratio_min).toBe(1);
    expect(s.clip_frac_low).toBeCloseTo(1 / 3, 6);
    expect(s.clip_frac_high).toBeCloseTo(1 / 3, 6);
    expect(s.entropy).toBeCloseTo(2, 6);
    expect(s.loss).toBeCloseTo(0.3, 6);
    expect(s.groups_all_equal_frac).toBe(1);
    // lambda = [0, log 2]: ESS = (1 + 2)^2 / (1 + 4) / 2 = 0.9.
    expect(s.ess).toBeCloseTo(0.9, 6);
    expect(s.adv_hist.reduce((a, b) => a + b)).toBe(3);
    expect(s.adv_hist[histBin(1, -3, 3)]).toBe(2);
    expect(s.ratio_hist[23]).toBe(1);
  });
  it('adv_zero_frac counts |A| <= ADV_ZERO_TOL (as f32) as zero, and nothing larger', () => {
    const [tol, above] = advZeroEdges();
    const adv = f32([0, 1e-9, -1e-9, tol, -tol, above, -above, 0.5]);
    const n = adv.length;
    const s = statsCpu({
      mask: new Float32Array(n).fill(1), adv, logp: new Float32Array(n), logpOld: new Float32Array(n), entropy: new Float32Array(n),
      kl: new Float32Array(n), clip: new Int32Array(n), loss: new Float32Array(n), rewards: f32([1]),
      groupStart: Uint32Array.of(0), groupSize: Uint32Array.of(1), turns: Uint32Array.of(1), Tp: n, minibatches: 1,
    });
    expect(s.adv_zero_frac).toBe(5 / 8);
  });
  it('an empty mask gives finite defaults; ESS survives log-weights of +-1000', () => {
    const z = new Float32Array(4);
    const pair = { groupStart: Uint32Array.of(0, 0), groupSize: Uint32Array.of(2, 2), turns: Uint32Array.of(1, 1) };
    const s = statsCpu({ mask: z, adv: z, logp: z, logpOld: z, entropy: z, kl: z, clip: new Int32Array(4), loss: z, rewards: f32([0, 1]), ...pair, Tp: 2, minibatches: 1 });
    expect(s.ratio_mean).toBe(1);
    expect(s.adv_std).toBe(0);
    expect(s.groups_all_equal_frac).toBe(0);
    const big = statsCpu({ mask: f32([1, 1, 1, 1]), adv: z, logp: f32([20, 20, -20, -20]), logpOld: z, entropy: z, kl: z, clip: new Int32Array(4), loss: z, rewards: f32([0, 1]), ...pair, Tp: 2, minibatches: 1 });
    expect(big.ess).toBeCloseTo(0.5, 6);
  });
  it('histBin puts out-of-range values in the end bins', () => {
    expect(histBin(-100, -3, 3)).toBe(0);
    expect(histBin(100, -3, 3)).toBe(23);
    expect(histBin(0, -3, 3)).toBe(12);
  });
});

describe('safeTanh', () => {
  it('matches tanh and never overflows', () => {
    for (const x of [-1e6, -20, -1, 0, 0.5, 20, 1e6]) expect(safeTanh(x)).toBeCloseTo(Math.tanh(x), 6);
  });
});
