/**
 * Live step-through (trainer stepThrough(), docs/EXPLAIN.md "Step through") on the GPU backend:
 * - it plays the same iteration as step(): a GPU run that steps through its second iteration gives
 *   exactly the metrics (but `ms`) and batch of a twin run that steps, and trains on identically;
 * - its captures agree with the CPU backend's of the same seeded run, stage by stage: the sampled
 *   tokens exactly; the advantage stage's log-probs and advantages; after every optimizer step the
 *   minibatch's log-probs, ratios, clips and losses, the gradient norm, the ESS and lr factor, and
 *   the size of the parameter change.
 * Tolerances (float32 on both sides, summed in other orders): as tests/gpu/backend.gpu.test.ts,
 * per-token values atol 5e-5, rtol 5e-4 (forward passes of parameters that differ by float32
 * rounding carried through Adam steps); the gradient norm and the parameter change rtol 1e-3 (a
 * tree reduction over every parameter against a float64 loop). Clip flags may differ only where the
 * log-ratio lies within 1e-5 of a clip bound, where float32 rounding picks the side.
 */
import { describe, expect, it } from 'vitest';
import { defaultConfig, withFieldText, type RunConfig } from '../../workers/core/config';
import { createCpuBackend } from '../../workers/core/cpuBackend';
import { createGpuBackend } from '../../workers/core/gpuBackend';
import { createTrainer } from '../../workers/core/trainer';
import type { BatchTensors } from '../../workers/core/backend';
import { dumpBatch } from '../../workers/formats/batchDump';
import { compareClose } from '../helpers/expectClose';
import { requireGpuHandle } from '../helpers/requireGpu';

function config(overrides: Record<string, string>): RunConfig {
  let cfg = defaultConfig();
  for (const [k, v] of Object.entries(overrides)) cfg = withFieldText(cfg, k, v);
  return cfg;
}

const TOK = { atol: 5e-5, rtol: 5e-4 };
const NORM_RTOL = 1e-3;

const SETS: Array<[string, Record<string, string>]> = [
  ['GRPO, 2 epochs x 2 minibatches, KL', { methods: 'grpo' }],
  ['VCPO, stale rollouts (per-step ESS and lr)', { methods: 'vcpo', staleness: '1' }],
  ['PPO (critic, GAE)', { methods: 'ppo' }],
  ['IGPO (answer scoring on the device)', { methods: 'igpo' }],
  ['SeeUPO (turn stages, last turn first)', { methods: 'grpo,seeupo' }],
  // The captured pieces split at the correction's host step too.
  ['Token-TIS and Seq-MIS against a bf16, top-3 sampler (a host step)', { methods: 'grpo,tis,seqrs', 'rollout.precision': 'bf16', 'rollout.topK': '3' }],
];

/** Rows [r0, r1) of a per-row tensor. */
const rows = (a: ArrayLike<number>, r0: number, r1: number) => Array.from(a).slice(r0, r1);

describe('step-through: GPU backend', () => {
  for (const [name, set] of SETS) {
    it(`${name}: same iteration as step(), captures agree with the CPU backend's`, async () => {
      const gpu = await requireGpuHandle();
      const cfg = config({ batch: '3', group: '4', seed: '5', epochs: '2', minibatches: '2', klCoef: '0.01', 'model.hidden': '16', ...set });
      const gpuBackend = (shape: Parameters<typeof createGpuBackend>[1], params: Float32Array) => createGpuBackend(gpu.device, shape, params, { label: gpu.label });
      const g = await createTrainer(cfg, gpuBackend);
      const twin = await createTrainer(cfg, gpuBackend);
      const c = await createTrainer(cfg, createCpuBackend);
      await g.step();
      await twin.step();
      await c.step();

      const { row: rg, capture: cg } = await g.stepThrough();
      const rt = await twin.step();
      const { capture: cc } = await c.stepThrough();
      // The pieces of a captured GPU update are the same dispatches in the same order: bit for bit.
      expect({ ...rg, ms: 0 }).toEqual({ ...rt, ms: 0 });
      expect(await dumpBatch(g)).toEqual(await dumpBatch(twin));
      const next = [await g.step(), await twin.step()];
      expect({ ...next[0]!, ms: 0 }).toEqual({ ...next[1]!, ms: 0 });

      const Tp = g.shape.Tp;
      const R = g.shape.N * Tp;
      const report: Record<string, number> = {};
      const close = (label: string, a: ArrayLike<number>, e: ArrayLike<number>, o = TOK) => {
        const r = compareClose(a, e, { ...o, label });
        report[label.replace(/ \d+$/, '')] = Math.max(report[label.replace(/ \d+$/, '')] ?? 0, r.maxAbs);
        expect(r.bad, `${label}: first bad index ${r.firstBad}, gpu ${a[r.firstBad]} cpu ${e[r.firstBad]}, max abs ${r.maxAbs}`).toBe(0);
      };
      expect(Array.from(cg.prepared.seq)).toEqual(Array.from(cc.prepared.seq));
      for (const k of ['logpOld', 'logpRef', 'adv'] as const satisfies readonly (keyof BatchTensors)[]) close(`advantages: ${k}`, cg.prepared[k], cc.prepared[k]);
      expect(cg.prepared.isWeight === undefined).toBe(cc.prepared.isWeight === undefined);
      if (cc.prepared.isWeight) {
        close('advantages: isWeight', cg.prepared.isWeight!, cc.prepared.isWeight);
        expect(Array.from(cg.prepared.rsKeep!)).toEqual(Array.from(cc.prepared.rsKeep!));
      }
      expect(cg.steps.length).toBe(cc.steps.length);
      cg.steps.forEach((sg, i) => {
        const sc = cc.steps[i]!;
        expect(sg.step).toEqual(sc.step);
        const [r0, r1] = [sg.step.n0 * Tp, sg.step.n1 * Tp];
        for (const k of ['logp', 'ratio', 'loss', 'kl'] as const) close(`step: ${k} ${i}`, rows(sg.tensors[k], r0, r1), rows(sc.tensors[k], r0, r1));
        // A differing clip flag only at a log-ratio on a clip bound's float32 edge.
        for (let r = r0; r < r1; r++) {
          if (sg.tensors.clip[r] === sc.tensors.clip[r]) continue;
          const lam = Math.log(sc.tensors.ratio[r]!);
          const rp = g.shape.loss.ratio as { clipLow?: number; clipHigh?: number; dualClip?: number };
          const bounds = [1 - (rp.clipLow ?? 0.2), 1 + (rp.clipHigh ?? 0.2), rp.dualClip ?? 3].map(Math.log);
          const edge = bounds.some((b) => Math.abs(lam - b) < 1e-5);
          expect(edge, `step ${i} row ${r}: clip gpu ${sg.tensors.clip[r]} cpu ${sc.tensors.clip[r]}, log-ratio ${lam}`).toBe(true);
        }
        close(`step: grad norm ${i}`, [sg.gradNorm], [sc.gradNorm], { atol: 1e-7, rtol: NORM_RTOL });
        close(`step: ess ${i}`, [sg.ess, sg.lrScale], [sc.ess, sc.lrScale], { atol: 1e-5, rtol: NORM_RTOL });
        close(`step: param change ${i}`, [sg.params.deltaNorm, sg.params.normAfter], [sc.params.deltaNorm, sc.params.normAfter], { atol: 1e-7, rtol: NORM_RTOL });
      });
      expect(R).toBeGreaterThan(0);
      console.log(`step-through ${name}: largest |gpu - cpu| ${JSON.stringify(report)}`);
      for (const t of [g, twin, c]) t.destroy();
    });
  }
});
