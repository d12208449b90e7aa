/**
 * Finite-difference check of the whole GPU gradient: forward.wgsl embedProject, forward.wgsl,
 * logitGrad.wgsl and the four backward kernels (headGrad and slotGrad two-pass reductions sharing
 * one scratch buffer, then firstLayerGrad from slotGrad's G) give dL/dparams of
 * L = sum_r c_r log pi(a_r) (the form every policy loss takes through dlogp), compared with central
 * differences of the same loss computed by the CPU references (forwardCpu + tokenStatsCpu) on a
 * small model, every parameter perturbed; some context tokens lie past the vocabulary (PAD).
 * Tolerance: the reference loss is rounded to f32 per row (~6e-8 relative), so a central difference
 * with step 2e-3 carries noise of about sqrt(R) * 6e-8 * |L| / 4e-3 ~ 1e-4, plus O(step^2)
 * truncation; atol 1e-3 and rtol 1e-2 leave room for both while a wrong term (a missing factor,
 * a dropped row or context slot) is off by far more.
 */
import { describe, expect, it } from 'vitest';
import { forwardCpu, type MlpDims } from '../../kernels/model/mlp';
import { backwardScratchWords, embedProjectKernel, firstLayerGradKernel, forwardKernel, headGradKernel, hiddenGradKernel, slotGradKernel, slotTableWords } from '../../kernels/model/mlpKernels';
import { logitGradKernel } from '../../kernels/softmax/logitGrad';
import { ppoLossCpu } from '../../kernels/loss/ppoLoss';
import { tokenStatsCpu } from '../../kernels/softmax/tokenStats';
import { createRng } from '../../workers/core/rng';
import { expectClose } from '../helpers/expectClose';
import { dispatch, Scratch } from '../../kernels/selftest/harness';
import { withValidation } from '../helpers/validation';
import { makeMlpCase } from '../../kernels/selftest/fixtures';
import { requireGpu } from '../helpers/requireGpu';

describe('finite differences of the loss match the GPU gradient', () => {
  it('every parameter of a small MLP (V 7, K 3, D 3, H 5; 14 rows, some with PAD context, some past the vocabulary)', async () => {
    const device = await requireGpu();
    const dims: MlpDims = { V: 7, K: 3, D: 3, H: 5 };
    const T = 0.8;
    const rng = createRng(31337);
    const c = makeMlpCase(dims, 14, rng, { L: 6, N: 4, pastVocab: 4 });
    const R = c.rowPos.length;
    const coef = Float32Array.from({ length: R }, () => rng.normal());
    const loss = (p: Float32Array): number => {
      const f = forwardCpu(p, dims, c.seq, c.L, c.rowPos, c.grammar, T);
      const { logp } = tokenStatsCpu(f.z, dims.V, c.seq, c.rowPos);
      let s = 0;
      for (let r = 0; r < R; r++) s += coef[r]! * logp[r]!;
      return s;
    };
    const P = c.params.length;

    const grads = await withValidation(device, async () => {
      const g = new Scratch(device);
      const k = {
        project: embedProjectKernel.create(device),
        fwd: forwardKernel.create(device),
        lg: logitGradKernel.create(device),
        head: headGradKernel.create(device),
        hidden: hiddenGradKernel.create(device),
        slot: slotGradKernel.create(device),
        first: firstLayerGradKernel.create(device),
      };
      const params = g.upload(c.params);
      const seq = g.upload(c.seq);
      const rowPos = g.upload(c.rowPos);
      const grammar = g.upload(Uint32Array.from(c.grammar));
      const [proj, h, z, dz, da, G, out] = [slotTableWords(dims), R * dims.H, R * dims.V, R * dims.V, R * dims.H, slotTableWords(dims), P].map((n) =>
        g.empty(n),
      ) as [GPUBuffer, GPUBuffer, GPUBuffer, GPUBuffer, GPUBuffer, GPUBuffer, GPUBuffer];
      const cfg = { dims, numRows: R, seqLen: c.L };
      const partials = g.empty(backwardScratchWords(dims, c.L, [R]));
      dispatch(device, [
        [k.project, k.project.bind({ params, proj }, cfg)],
        [k.fwd, k.fwd.bind({ params, proj, seq, rowPos, grammar, h, z }, { ...cfg, temperature: T })],
        [k.lg, k.lg.bind({ z, seq, rowPos, dlogp: g.upload(coef), dz }, { ...cfg, vocab: dims.V, temperature: T })],
        [k.head, k.head.bind({ h, dz, partials, grads: out }, cfg)],
        [k.hidden, k.hidden.bind({ params, h, dz, da }, cfg)],
        [k.slot, k.slot.bind({ seq, rowPos, da, partials, grads: G }, cfg)],
        [k.first, k.first.bind({ params, G, grads: out }, cfg)],
      ]);
      const res = await g.readF32(out, P);
      g.destroy();
      for (const x of Object.values(k)) x.destroy();
      return res;
    });

    const fd = new Float64Array(P);
    const step = 2e-3;
    for (let i = 0; i < P; i++) {
      const plus = Float32Array.from(c.params);
      const minus = Float32Array.from(c.params);
      plus[i] = plus[i]! + step;
      minus[i] = minus[i]! - step;
      fd[i] = (loss(plus) - loss(minus)) / (plus[i]! - minus[i]!);
    }
    const nonzero = Array.from(fd).filter((x) => Math.abs(x) > 1e-3).length;
    expect(nonzero).toBeGreaterThan(P / 3);
    expectClose(grads, fd, { atol: 1e-3, rtol: 1e-2, label: `gradcheck ${P} params` });
  });

  it('ppoLossCpu dlogp is the derivative of its loss away from the clip kinks (the reference feeding logitGrad)', () => {
    const rng = createRng(5);
    const R = 200;
    const logpOld = Float64Array.from({ length: R }, () => -Math.abs(rng.normal()) * 2);
    const logp = Float32Array.from(logpOld, (x) => x + rng.normal() * 0.3);
    const lo = Float32Array.from(logpOld);
    const ref = Float32Array.from(logpOld, (x) => x + rng.normal() * 0.3);
    const adv = Float32Array.from({ length: R }, () => rng.normal());
    const w = Float32Array.from({ length: R }, () => rng.next());
    const o = { clipLow: 0.2, clipHigh: 0.28, dualClip: 3, klCoef: 0.3 };
    const base = ppoLossCpu(logp, lo, ref, adv, w, o);
    const h = 1e-3;
    let checked = 0;
    for (let i = 0; i < R; i++) {
      const d = logp[i]! - lo[i]!;
      const nearKink = [Math.log(0.8), Math.log(1.28)].some((k) => Math.abs(d - k) < 5 * h) || (adv[i]! < 0 && Math.abs(Math.exp(d) - 3) < 0.05);
      if (nearKink) continue;
      const p = Float32Array.from(logp);
      const m = Float32Array.from(logp);
      p[i] = p[i]! + h;
      m[i] = m[i]! - h;
      const fd = (ppoLossCpu(p, lo, ref, adv, w, o).loss[i]! - ppoLossCpu(m, lo, ref, adv, w, o).loss[i]!) / (p[i]! - m[i]!);
      expect(Math.abs(fd - base.dlogp[i]!), `row ${i}`).toBeLessThan(2e-3 + 1e-2 * Math.abs(fd));
      checked++;
    }
    expect(checked).toBeGreaterThan(150);
  });
});
