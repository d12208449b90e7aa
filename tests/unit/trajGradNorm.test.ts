/**
 * VCPO's per-trajectory gradient norm (kernels/model/trajGradNorm.ts) against the gradient itself:
 * the backend's own loss pipeline run on one trajectory with advantage 1 and its truncated IS weight
 * (ppoLoss with seq-mean-token-mean weights, logitGrad, backward; the norm times the length, as the
 * reference undoes the 1/L), finite differences of c_n sum_t m_t log pi on a tiny model in float64,
 * a case worked by hand, and the baseline it feeds.
 * Tolerances: the layer-structure sums are float64 and the result f32, the brute-force gradient is
 * f32 (backwardCpu stores f32), so 1e-5 relative; central differences with step 1e-5 on an O(1)
 * float64 function are good to about 1e-7 absolute per component, 1e-5 relative on the norm.
 */
import { describe, expect, it } from 'vitest';
import { advantageCpu, groupLayout } from '../../kernels/advantage/advantage';
import { ADVANTAGE_DEFAULTS } from '../../kernels/advantage/options';
import { backwardCpu, contextToken, forwardCpu, initParams, paramLayout, vocabToken, type MlpDims } from '../../kernels/model/mlp';
import { trajGradNormCpu, truncatedIsSquared } from '../../kernels/model/trajGradNorm';
import { logitGradCpu } from '../../kernels/softmax/logitGrad';
import { ppoLossCpu } from '../../kernels/loss/ppoLoss';
import { gradNormCpu } from '../../kernels/optimizer/adam';
import { trajStatsCpu } from '../../kernels/stats/trajStats';
import { tokenStatsCpu } from '../../kernels/softmax/tokenStats';
import { createRng } from '../../workers/core/rng';

const dims: MlpDims = { V: 7, K: 3, D: 3, H: 5 };
const N = 4;
const L = 6;
const Tp = L - 1;
const T = 0.7;

/** A seeded tiny problem: tokens, a grammar that forbids some pairs, a mask with holes, IS weights. */
function problem(seed: number) {
  const rng = createRng(seed);
  const params = initParams(dims, rng);
  // Larger output weights than the init's 0.01, so every layer's gradient matters.
  const P = paramLayout(dims);
  for (let i = P.w2; i < P.size; i++) params[i] = rng.normal() * 0.5;
  for (let i = P.b1; i < P.b1 + dims.H; i++) params[i] = rng.normal() * 0.3;
  const grammar = new Uint8Array(dims.V * dims.V).fill(1);
  const seq = new Int32Array(N * L);
  for (let n = 0; n < N; n++) {
    seq[n * L] = 1 + Math.floor(rng.next() * (dims.V - 1));
    for (let p = 1; p < L; p++) seq[n * L + p] = Math.floor(rng.next() * dims.V);
  }
  // Forbid (prev, v) pairs no sampled token uses.
  for (let prev = 0; prev < dims.V; prev++) {
    for (let v = 0; v < dims.V; v++) {
      let used = false;
      for (let i = 1; i < N * L; i++) if (i % L && seq[i - 1] === prev && seq[i] === v) used = true;
      if (!used && rng.next() < 0.3) grammar[prev * dims.V + v] = 0;
    }
  }
  const rowPos = Uint32Array.from({ length: N * Tp }, (_, r) => Math.floor(r / Tp) * L + 1 + (r % Tp));
  const mask = Float32Array.from({ length: N * Tp }, (_, r) => (Math.floor(r / Tp) === 3 ? 0 : rng.next() < 0.75 ? 1 : 0));
  mask[0] = 1;
  const logIS = Float32Array.from({ length: N }, () => rng.normal() * 1.5);
  return { params, grammar, seq, rowPos, mask, logIS };
}

const inputOf = (pr: ReturnType<typeof problem>, isCap: number) => {
  const f = forwardCpu(pr.params, dims, pr.seq, L, pr.rowPos, pr.grammar, T);
  return { params: pr.params, dims, seq: pr.seq, L, rowPos: pr.rowPos, h: f.h, z: f.z, mask: pr.mask, temperature: T, logIS: pr.logIS, isCap };
};

/** log pi(a_t) of one row in float64 from the textbook layers (no f32 anywhere). */
function logp64(p: Float64Array, pr: ReturnType<typeof problem>, r: number): number {
  const { V, K, D, H } = dims;
  const P = paramLayout(dims);
  const pos = pr.rowPos[r]!;
  const hid = new Float64Array(H);
  for (let j = 0; j < H; j++) {
    let a = p[P.b1 + j]!;
    for (let k = 0; k < K; k++) {
      const t = vocabToken(contextToken(pr.seq, pos, L, K, k), V);
      for (let d = 0; d < D; d++) a += p[P.emb + t * D + d]! * p[P.w1 + (k * D + d) * H + j]!;
    }
    hid[j] = Math.tanh(a);
  }
  const prev = pr.seq[pos - 1]!;
  const z: number[] = [];
  let zt = 0;
  for (let v = 0; v < V; v++) {
    if (!pr.grammar[prev * V + v]) continue;
    let a = p[P.b2 + v]!;
    for (let j = 0; j < H; j++) a += hid[j]! * p[P.w2 + j * V + v]!;
    z.push(a / T);
    if (v === pr.seq[pos]) zt = a / T;
  }
  const m = Math.max(...z);
  return zt - m - Math.log(z.reduce((s, x) => s + Math.exp(x - m), 0));
}

describe('trajGradNormCpu', () => {
  for (const isCap of [0, 2]) {
    it(`equals the norm of each trajectory's own loss gradient (A = 1, seq-mean-token-mean, times L; isCap ${isCap})`, () => {
      const pr = problem(11);
      const inp = inputOf(pr, isCap);
      const g2 = trajGradNormCpu(inp, Tp);
      const logp = tokenStatsCpu(inp.z, dims.V, pr.seq, pr.rowPos).logp;
      for (let n = 0; n < N; n++) {
        const len = pr.mask.subarray(n * Tp, (n + 1) * Tp).reduce((s, m) => s + m, 0);
        // Only trajectory n's rows carry a loss; its advantage is 1 times its truncated IS weight.
        const c = Math.sqrt(truncatedIsSquared(pr.logIS[n]!, isCap));
        const adv = Float32Array.from({ length: N * Tp }, (_, r) => (Math.floor(r / Tp) === n ? c : 0));
        const weight = Float32Array.from({ length: N * Tp }, (_, r) => (Math.floor(r / Tp) === n && len > 0 ? pr.mask[r]! / len : 0));
        const lo = ppoLossCpu(logp, logp, logp, adv, weight, { clipLow: 1, clipHigh: 1e9, dualClip: 1e9, klCoef: 0 });
        const grads = backwardCpu(pr.params, dims, pr.seq, L, pr.rowPos, inp.h, logitGradCpu(inp.z, dims.V, pr.seq, pr.rowPos, lo.dlogp, T));
        const brute = gradNormCpu(grads) * len;
        expect(Math.sqrt(g2[n]!)).toBeCloseTo(brute, 5);
        if (len > 0) expect(Math.abs(Math.sqrt(g2[n]!) / brute - 1)).toBeLessThan(1e-5);
      }
      // The fully masked trajectory has no gradient at all.
      expect(g2[3]).toBe(0);
    });
  }

  it('matches central finite differences of c_n sum_t m_t log pi in float64 over every parameter', () => {
    const pr = problem(23);
    const isCap = 3;
    const g2 = trajGradNormCpu(inputOf(pr, isCap), Tp);
    const base = Float64Array.from(pr.params);
    const eps = 1e-5;
    for (let n = 0; n < 3; n++) {
      const c = Math.sqrt(truncatedIsSquared(pr.logIS[n]!, isCap));
      const f = (p: Float64Array) => {
        let s = 0;
        for (let j = 0; j < Tp; j++) if (pr.mask[n * Tp + j]) s += logp64(p, pr, n * Tp + j);
        return c * s;
      };
      let sq = 0;
      for (let i = 0; i < base.length; i++) {
        const x = base[i]!;
        base[i] = x + eps;
        const up = f(base);
        base[i] = x - eps;
        const down = f(base);
        base[i] = x;
        sq += ((up - down) / (2 * eps)) ** 2;
      }
      expect(sq).toBeGreaterThan(1e-3);
      expect(Math.abs(g2[n]! / sq - 1)).toBeLessThan(1e-5);
    }
  });

  it('a case by hand: W1 = W2 = 0, b = 0, T = 1 gives ||sum_t (e_a_t - 1/V)||^2 = sum_v c_v^2 - L^2/V', () => {
    const d4: MlpDims = { V: 4, K: 2, D: 2, H: 3 };
    const params = new Float32Array(paramLayout(d4).size);
    params.set([0.3, -1, 2, 0.5, 1, 1, -0.2, 0.7]); // embeddings only: no effect without W1
    const seq = Int32Array.from([1, 2, 2, 1, 3, 0]); // two trajectories of 3 tokens, rows at 1, 2
    const rowPos = Uint32Array.from([1, 2, 4, 5]);
    const f = forwardCpu(params, d4, seq, 3, rowPos, new Uint8Array(16).fill(1), 1);
    const g2 = trajGradNormCpu({ params, dims: d4, seq, L: 3, rowPos, h: f.h, z: f.z, mask: Float32Array.from([1, 1, 1, 1]), temperature: 1, logIS: new Float32Array(2), isCap: 8 }, 2);
    // Tokens (2, 2): counts (0, 0, 2, 0): 4 - 4/4 = 3. Tokens (3, 0): 1 + 1 - 1 = 1.
    expect(g2[0]).toBeCloseTo(3, 6);
    expect(g2[1]).toBeCloseTo(1, 6);
    // The proxy sees only per-token terms: 2 x (1 - 2/4 + 1/4) = 1.5 for both.
    const ts = tokenStatsCpu(f.z, 4, seq, rowPos);
    const proxy = trajStatsCpu({ mask: Float32Array.from([1, 1, 1, 1]), logpOld: ts.logp, logpRollout: ts.logp, entropyOld: ts.entropy, sumP2Old: ts.sumP2 }, 2).g2;
    expect(proxy[0]).toBeCloseTo(1.5, 6);
    expect(proxy[1]).toBeCloseTo(1.5, 6);
    // OPOB on the group with R = [1, 0]: b = (3 x 1 + 1 x 0) / 4 = 0.75, population std 0.5, so
    // A = [0.5, -1.5]; the proxy's equal weights give the plain mean and [1, -1].
    const adv = (gg: Float32Array) =>
      advantageCpu(
        { reward: Float32Array.from([1, 0]), ...groupLayout([2]), turns: Uint32Array.from([1, 1]), mask: Float32Array.from([1, 1]),
          trajStats: { len: Float32Array.from([2, 2]), entMean: new Float32Array(2), logIS: new Float32Array(2), g2: gg } },
        { ...ADVANTAGE_DEFAULTS, estimator: 'opob', unbiasedStd: false, eps: 0, stdMin: 1e-8, isCap: 8 },
        { numTraj: 2, tp: 1, maxTurns: 1, actionLen: 1, nRoles: 0 },
      );
    const a = adv(g2);
    expect(a[0]).toBeCloseTo(0.5, 5);
    expect(a[1]).toBeCloseTo(-1.5, 5);
    expect(Array.from(adv(proxy)).map((x) => +x.toFixed(5))).toEqual([1, -1]);
  });

  it('a trajectory with no masked row is 0; isCap = 0 applies no IS weight; a capped weight enters squared', () => {
    const pr = problem(5);
    const none = trajGradNormCpu(inputOf(pr, 0), Tp);
    const capped = trajGradNormCpu(inputOf(pr, 2), Tp);
    expect(none[3]).toBe(0);
    for (let n = 0; n < 3; n++) expect(capped[n]! / none[n]!).toBeCloseTo(Math.min(Math.exp(pr.logIS[n]!), 2) ** 2, 4);
  });
});
