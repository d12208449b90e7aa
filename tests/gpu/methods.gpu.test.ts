/**
 * Every method of the registry through the shared trainer on the GPU backend against the CPU
 * backend (every method runs on both backends, with matching numbers): two iterations each, small batch, the same seed; the same tokens are sampled (so the
 * sampling and filtering stages took the same decisions) and the metrics agree.
 *
 * Tolerance: 1e-3 relative (absolute below 1), as in trainer.gpu.test.ts: metrics are means of f32
 * quantities reduced in different orders, and after Adam steps the parameters differ by ~1e-6.
 * Two epochs make the ratio stage (GSPO, GMPO, SeeUPO) act on ratios that are not all 1.
 */
import { describe, expect, it } from 'vitest';
import { defaultConfig, withFieldText, type RunConfig } from '../../workers/core/config';
import { createCpuBackend } from '../../workers/core/cpuBackend';
import { createGpuBackend } from '../../workers/core/gpuBackend';
import { SCALAR_METRICS } from '../../workers/core/metrics';
import { createTrainer } from '../../workers/core/trainer';
import { dumpBatch } from '../../workers/formats/batchDump';
import { requireGpuHandle } from '../helpers/requireGpu';

const BASE: Record<string, string> = { batch: '3', group: '4', seed: '3', epochs: '2', 'model.hidden': '16', lr: '0.02' };

/** One run per method, on a task where it acts; methods= is applied after the task. */
const CASES: Array<[string, Record<string, string>]> = [
  ['grpo', {}],
  ['ppo', {}],
  ['ppo', { group: '1', 'ppo.lambda': '0.9', 'ppo.gamma': '0.95' }],
  ['drgrpo', {}],
  ['rloo', {}],
  ['reinforcepp', { 'reinforcepp.klInReward': '0.05' }],
  ['grpo,dapo', {}],
  ['grpo,gspo', {}],
  ['grpo,gmpo', {}],
  ['grpo,cispo', {}],
  ['grpo,sapo', {}],
  ['gigpo', {}],
  ['grpo,dynfilter', { 'dynfilter.maxGenBatches': '3' }],
  ['grpo,cispo,dynfilter', {}],
  ['grpo,seeupo', {}],
  ['igpo', {}],
  ['igpo', { task: 'tools', 'igpo.igType': 'prob_diff', 'igpo.norm': 'joint' }],
  ['cm2', { task: 'tools' }],
  // Seed 3 puts one token's ratio within 1e-3 of the clip edge 0.8 after the first epoch, where the
  // backends' round-off-level gradients (which Adam's first step turns into +-lr) decide its flag.
  ['cm2', { task: 'tools', 'cm2.level': 'turn', seed: '4' }],
  ['grpo,edge', {}],
  ['grpo,edge', { 'edge.clamp': 'true' }],
  ['grpo,regft', {}],
  ['grpo,pfppo', { 'env.rmNoise': '0.5' }],
  ['grpo,pfppo', { 'env.rmNoise': '0.5', 'pfppo.scope': 'group' }],
  ['grpo,zerosearch', { 'zerosearch.pStart': '0.3' }],
  ['grpo,dars', { 'dars.nMax': '8' }],
  ['sampo', { 'sampo.coldStart': '0' }],
  ['vcpo', { staleness: '2' }],
  ['vcpo', { staleness: '2', minibatches: '2' }],
  // Each optimizer step's lr from its own ESS at its own parameters (trajStats and essScale per step).
  ['vcpo', { epochs: '2', minibatches: '2' }],
  // The default weighs each trajectory by its own gradient norm (trajGradNorm.wgsl); the proxy is an option.
  ['vcpo', { staleness: '2', 'vcpo.isCap': '1.5' }],
  ['vcpo', { staleness: '2', 'vcpo.gradNorm': 'proxy' }],
  ['grpo,prorl', { 'prorl.resetEvery': '1' }],
  ['otb', {}],
  ['grpo,drmas', { task: 'roles' }],
  ['rloo,drmas', { task: 'roles' }],
  ['grpo', { staleness: '1', klType: 'k2', klCoef: '0.1' }],
  // The rollout corrections (docs/METHODS.md 5.19) against a bf16, top-3 sampler: weights and
  // rejection from ℓ_old and ℓ_μ read back between two submits. A rejection flips only where a
  // statistic lies within f32 noise of its bound, which these seeds avoid.
  ['grpo,tis', { 'rollout.precision': 'bf16', 'rollout.topK': '3', klCoef: '0.05' }],
  ['grpo,seqrs', { 'rollout.precision': 'bf16', 'rollout.topK': '3' }],
  ['grpo,geors', { 'rollout.precision': 'bf16', 'rollout.topK': '3' }],
  ['grpo,gmpo,seqis', { 'rollout.precision': 'bf16', 'rollout.topK': '3' }],
  ['grpo,seeupo,tis,tokenrs', { 'rollout.precision': 'bf16', 'rollout.topK': '3', 'tokenrs.upper': '1.1' }],
];

function config(methods: string, extra: Record<string, string>): RunConfig {
  let cfg = defaultConfig();
  const all = { ...BASE, ...extra };
  if (all.task) cfg = withFieldText(cfg, 'task', all.task);
  cfg = withFieldText(cfg, 'methods', methods);
  for (const [k, v] of Object.entries(all)) if (k !== 'task') cfg = withFieldText(cfg, k, v);
  return cfg;
}

describe('every method: GPU backend vs CPU backend through the trainer', () => {
  for (const [methods, extra] of CASES) {
    const name = `${methods}${Object.keys(extra).length ? ` (${Object.entries(extra).map(([k, v]) => `${k}=${v}`).join(', ')})` : ''}`;
    it(name, async () => {
      const gpu = await requireGpuHandle();
      const cfg = config(methods, extra);
      const g = await createTrainer(cfg, (shape, params) => createGpuBackend(gpu.device, shape, params, { label: gpu.label }));
      const c = await createTrainer(cfg, createCpuBackend);
      try {
        for (let i = 0; i < 2; i++) {
          const rg = await g.step();
          const rc = await c.step();
          for (const k of SCALAR_METRICS) {
            if (k === 'ms') continue;
            expect(Math.abs(rg[k] - rc[k]), `iter ${rc.iter} ${k}: gpu ${rg[k]} cpu ${rc[k]}`).toBeLessThanOrEqual(1e-3 * Math.max(1, Math.abs(rc[k])));
          }
          const [dg, dc] = [await dumpBatch(g), await dumpBatch(c)];
          expect(dg.trajs.map((t) => t.tokens.map((x) => x.tok))).toEqual(dc.trajs.map((t) => t.tokens.map((x) => x.tok)));
          const advG = dg.trajs.flatMap((t) => t.tokens.map((x) => x.adv));
          const advC = dc.trajs.flatMap((t) => t.tokens.map((x) => x.adv));
          for (let j = 0; j < advC.length; j++) expect(Math.abs(advG[j]! - advC[j]!), `adv ${j}`).toBeLessThanOrEqual(1e-3 * Math.max(1, Math.abs(advC[j]!)));
          // The dump's other fields (what each method uses) agree too.
          const near = (x: number | undefined, y: number | undefined, what: string) => {
            expect(x === undefined, `${what} present on one backend only`).toBe(y === undefined);
            if (x !== undefined && y !== undefined) expect(Math.abs(x - y), `${what}: gpu ${x} cpu ${y}`).toBeLessThanOrEqual(1e-3 * Math.max(1, Math.abs(y)));
          };
          dc.trajs.forEach((tc, n) => {
            const tg = dg.trajs[n]!;
            expect([tg.origin, tg.minibatch, tg.draw_weight]).toEqual([tc.origin, tc.minibatch, tc.draw_weight]);
            near(tg.grad_norm, tc.grad_norm, `grad_norm ${n}`);
            expect(tg.p_answer?.length).toBe(tc.p_answer?.length);
            tc.p_answer?.forEach((p, k) => near(tg.p_answer![k], p, `p_answer ${n}.${k}`));
            tc.tokens.forEach((kc, j) => {
              const kg = tg.tokens[j]!;
              for (const f of ['logp_rollout', 'entropy_old', 'sum_p2_old', 'kl', 'value', 'ret', 'is_weight', 'rs_keep'] as const) near(kg[f], kc[f], `${f} ${n}.${j}`);
            });
          });
          expect(dg.noise_p).toBe(dc.noise_p);
          expect(dg.ess_minibatch?.length).toBe(dc.ess_minibatch?.length);
          dc.ess_minibatch?.forEach((e, i) => near(dg.ess_minibatch![i], e, `ess_minibatch ${i}`));
          dc.lr_minibatch?.forEach((e, i) => near(dg.lr_minibatch![i], e, `lr_minibatch ${i}`));
        }
      } finally {
        g.destroy();
      }
    });
  }
});
