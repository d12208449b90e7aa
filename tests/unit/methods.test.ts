/**
 * The method catalogue: every registry entry is complete and has a test of its defining
 * behaviour here, on a constructed batch or a few seeded CPU iterations; conflicts and task
 * requirements are refused by name. The kernels' own tests check the formulas in detail
 * (tests/unit/advantage.test.ts, tests/unit/ppoLoss.test.ts); these check that each method's
 * switch reaches the stage it acts on.
 */
import { describe, expect, it } from 'vitest';
import { ADVANTAGE_DEFAULTS, advantageCpu, groupLayout } from '../../kernels/advantage/advantage';
import { criticUpdateCpu, gaeCpu } from '../../kernels/advantage/critic';
import { infoGainCpu } from '../../kernels/advantage/infoGain';
import { ppoLossCpu, RATIO_MODES } from '../../kernels/loss/ppoLoss';
import { seqRatioCpu } from '../../kernels/loss/seqRatio';
import { ConfigError, defaultConfig, parseConfig, withField, withFieldText, withMethods, type RunConfig } from '../../workers/core/config';
import { createCpuBackend } from '../../workers/core/cpuBackend';
import { conflictsOf, ESTIMATOR_IDS, methodDef, METHOD_IDS } from '../../workers/core/methods';
import type { MetricRow } from '../../workers/core/metrics';
import { resolvePlan } from '../../workers/core/plan';
import { createRng } from '../../workers/core/rng';
import { darsExtra, pfppoCounts } from '../../workers/core/selection';
import { createTrainer, type Trainer } from '../../workers/core/trainer';
import { dumpBatch, type BatchDump } from '../../workers/formats/batchDump';
import { toggleBlocker, toggledMethods } from '../../app/methodToggle';

const SMALL = { batch: '4', group: '4', 'model.hidden': '16', seed: '2' };

function cfgOf(methods: string, extra: Record<string, string> = {}): RunConfig {
  const all: Record<string, string> = { ...SMALL, ...extra };
  let cfg = defaultConfig();
  if (all.task) cfg = withFieldText(cfg, 'task', all.task);
  cfg = withFieldText(cfg, 'methods', methods);
  for (const [k, v] of Object.entries(all)) if (k !== 'task') cfg = withFieldText(cfg, k, v);
  return cfg;
}

async function run(cfg: RunConfig, iters: number): Promise<{ t: Trainer; rows: MetricRow[] }> {
  const t = await createTrainer(cfg, createCpuBackend);
  const rows: MetricRow[] = [];
  for (let i = 0; i < iters; i++) rows.push(await t.step());
  return { t, rows };
}

const f32 = (a: number[]) => Float32Array.from(a);

/** One defining-behaviour test per method id; the first test checks none is missing. */
const DEFINING: Record<string, () => Promise<void> | void> = {
  grpo() {
    // All-equal rewards: every advantage is exactly 0 (Advantage Collapse).
    const adv = advantageCpu({ reward: f32([1, 1, 1, 1]), ...groupLayout([4]), turns: Uint32Array.of(1, 1, 1, 1), mask: f32([1, 1, 1, 1]) }, ADVANTAGE_DEFAULTS, shape(4, 1));
    expect(Array.from(adv)).toEqual([0, 0, 0, 0]);
  },
  drgrpo() {
    const p = resolvePlan(cfgOf('drgrpo'));
    expect(p.advantage.scaleStd).toBe(false);
    expect(p.lossAgg).toBe('seq-mean-token-sum-norm');
    // One success in 4: GRPO gives the success (G-1)/sqrt(G)-ish, Dr. GRPO just R - mean = 0.75.
    const adv = advantageCpu({ reward: f32([1, 0, 0, 0]), ...groupLayout([4]), turns: Uint32Array.of(1, 1, 1, 1), mask: f32([1, 1, 1, 1]) }, p.advantage, shape(4, 1));
    expect(adv[0]).toBeCloseTo(0.75, 6);
  },
  async ppo() {
    // GAE on a hand-worked trajectory: values 0.2, 0.5, 0 along three policy rows, outcome 1.
    const critic = f32([0.2, 0.5, 0]);
    const keys = Uint32Array.of(0, 1, 2);
    const mc = gaeCpu(critic, keys, f32([1, 1, 1]), f32([1]), 3, { gamma: 1, lambda: 1 });
    expect(Array.from(mc.adv).map((x) => +x.toFixed(6))).toEqual([0.8, 0.5, 1]);
    expect(Array.from(mc.ret).map((x) => +x.toFixed(6))).toEqual([1, 1, 1]);
    const td = gaeCpu(critic, keys, f32([1, 1, 1]), f32([1]), 3, { gamma: 1, lambda: 0 });
    expect(Array.from(td.adv).map((x) => +x.toFixed(6))).toEqual([0.3, -0.5, 1]);
    criticUpdateCpu(critic, keys, f32([1, 1, 1]), mc.ret, 0.5);
    expect(Array.from(critic).map((x) => +x.toFixed(6))).toEqual([0.6, 0.75, 0.5]);
    // A learned baseline needs no group: at group size 1 the critic still centres the advantages.
    const { t, rows } = await run(cfgOf('ppo', { group: '1', batch: '16' }), 3);
    expect(rows.every((r) => Number.isFinite(r.loss))).toBe(true);
    const state = await t.snapshotNow();
    expect(state.state.critic!.some((v) => v !== 0)).toBe(true);
    expect(resolvePlan(t.config).whiten).toBe(true);
  },
  rloo() {
    const p = resolvePlan(cfgOf('rloo'));
    const adv = advantageCpu({ reward: f32([1, 0, 0, 0]), ...groupLayout([4]), turns: Uint32Array.of(1, 1, 1, 1), mask: f32([1, 1, 1, 1]) }, p.advantage, shape(4, 1));
    expect(adv[0]).toBeCloseTo(1, 6); // 1 - mean of the other three (0)
    expect(adv[1]).toBeCloseTo(-1 / 3, 6);
  },
  async reinforcepp() {
    // Batch whitening: an all-wrong group still gets a signal relative to a group that succeeded.
    const { t } = await run(cfgOf('reinforcepp'), 1);
    expect(resolvePlan(t.config).whiten).toBe(true);
    const d = await dumpBatch(t);
    const advs = d.trajs.flatMap((tr) => tr.tokens.map((x) => x.adv));
    expect(Math.abs(advs.reduce((a, b) => a + b, 0) / advs.length)).toBeLessThan(1e-5);
    expect(advs.filter((a) => a === 0).length).toBe(0);
  },
  async dapo() {
    const p = resolvePlan(cfgOf('grpo,dapo'));
    expect([p.ratio, p.lossAgg]).toEqual([{ mode: 'token', clipLow: 0.2, clipHigh: 0.28, dualClip: 3 }, 'token-mean']);
    // Dynamic sampling: the trained batch has no all-equal group while rounds remain, at a cost.
    const { rows } = await run(cfgOf('grpo,dapo', { 'dapo.maxGenBatches': '10' }), 2);
    for (const r of rows) {
      expect(r.groups_all_equal_frac).toBe(0);
      expect(r.rollouts).toBeGreaterThan(16);
    }
  },
  gspo() {
    // One outlier token (log-ratio +3 in 6 tokens): the token ratio is e^3, GSPO's s only e^0.5.
    const logp = f32([3, 0, 0, 0, 0, 0]);
    const zero = new Float32Array(6);
    const mask = f32([1, 1, 1, 1, 1, 1]);
    const seqLog = seqRatioCpu(mask, logp, zero, f32([1, 1, 1, 1, 1, 1]), { mode: 'sequence', tp: 6 });
    expect(seqLog[0]).toBeCloseTo(0.5, 6);
    const tok = ppoLossCpu(logp, zero, zero, f32([1, 1, 1, 1, 1, 1]), mask, { clipLow: 0.2, clipHigh: 0.2, dualClip: 3, klCoef: 0 });
    expect(tok.ratio[0]).toBeCloseTo(Math.exp(3), 4);
    const seq = ppoLossCpu(logp, zero, zero, f32([1, 1, 1, 1, 1, 1]), mask, { clipLow: 0.2, clipHigh: 0.2, dualClip: 3, klCoef: 0, ratioMode: RATIO_MODES.sequence, tp: 6 }, seqLog);
    expect(seq.ratio[0]).toBeCloseTo(Math.exp(0.5), 5);
    expect(resolvePlan(cfgOf('grpo,gspo')).ratio).toEqual({ mode: 'sequence', clipLow: 3e-4, clipHigh: 4e-4 });
  },
  async igpo() {
    // Hand-worked information gain: p = 0.1, 0.4, 0.5 before turns 0, 1, 2 of a 3-turn episode.
    const ig = infoGainCpu(f32([Math.log(0.1), Math.log(0.4), Math.log(0.5)]), 1, Uint32Array.of(3), f32([1]), 3, 'prob_diff');
    expect(Array.from(ig).map((x) => +x.toFixed(6))).toEqual([0.3, 0.1, 1]);
    const logDiff = infoGainCpu(f32([Math.log(0.1), Math.log(0.4), Math.log(0.5)]), 1, Uint32Array.of(2), f32([0]), 3, 'log_prob_diff');
    expect(logDiff[0]).toBeCloseTo(Math.log(4), 5);
    expect(Array.from(logDiff.subarray(1))).toEqual([0, 0]);
    // All-equal outcomes: GRPO's advantages are all 0; IGPO's are not (information gain differs).
    const cfg = cfgOf('igpo', { 'env.values': '64' });
    const { t } = await run(cfg, 1);
    const d = await dumpBatch(t);
    const groups = [...new Set(d.trajs.map((tr) => tr.group))].map((g) => d.trajs.filter((tr) => tr.group === g));
    const tied = groups.filter((g) => g.every((tr) => tr.reward === g[0]!.reward));
    expect(tied.length).toBeGreaterThan(0);
    for (const g of tied) expect(g.flatMap((tr) => tr.tokens.map((x) => x.adv)).some((a) => a !== 0)).toBe(true);
    expect(d.trajs.some((tr) => (tr.turn_rewards?.length ?? 0) > 1)).toBe(true);
  },
  async cm2() {
    // Partial checklist credit: groups rarely tie, unlike binary success on the same task.
    const plain = await run(cfgOf('grpo', { task: 'tools' }), 2);
    const cm2 = await run(cfgOf('cm2', { task: 'tools' }), 2);
    const mean = (rows: MetricRow[]) => rows.reduce((s, r) => s + r.groups_all_equal_frac, 0) / rows.length;
    expect(mean(cm2.rows)).toBeLessThan(mean(plain.rows));
    expect(resolvePlan(cm2.t.config).envConfig.env.toolReward).toBe('checklist');
  },
  async edge() {
    // GEC: wrong rollouts are corrected, so more trained rollouts succeed than the policy managed.
    const { t, rows } = await run(cfgOf('grpo,edge', { 'edge.inject': '0.5', 'edge.replace': '0.5' }), 1);
    const d = await dumpBatch(t);
    const trainedSuccess = d.trajs.filter((tr) => tr.reward === 1).length / d.trajs.length;
    expect(trainedSuccess).toBeGreaterThan(rows[0]!.success_rate + 0.3);
    expect(rows[0]!.rollouts).toBeGreaterThan(16);
    // EDA: a confident (low-entropy) rollout's advantage is scaled up.
    const adv = advantageCpu(
      {
        reward: f32([1, 0, 1, 0]),
        ...groupLayout([4]),
        turns: Uint32Array.of(1, 1, 1, 1),
        mask: f32([1, 1, 1, 1]),
        trajStats: { len: f32([1, 1, 1, 1]), entMean: f32([0.5, 1, 1, 1.5]), logIS: new Float32Array(4), g2: new Float32Array(4) },
      },
      { ...ADVANTAGE_DEFAULTS, entropyScale: true },
      shape(4, 1),
    );
    expect(adv[0]! / adv[2]!).toBeCloseTo(2, 5);
  },
  async regft() {
    // The fine-tuning stage trains on correct rollouts only, with advantage 1.
    const { t } = await run(cfgOf('grpo,regft', { 'regft.iters': '1' }), 1);
    const d = await dumpBatch(t);
    for (const tr of d.trajs) {
      if (!tr.kept) expect(tr.tokens.every((x) => x.adv === 0)).toBe(true);
      else expect(tr.tokens.every((x) => x.adv === 1)).toBe(true);
    }
    expect(d.trajs.some((tr) => tr.kept)).toBe(true);
    // Its loss is token cross-entropy (the paper's SFT), not the clipped surrogate with A = 1: four
    // epochs at a large lr push ratios past 1.2, and those tokens are not clipped; each kept
    // token's loss is -w logp >= 0 (the surrogate's -w r would be negative).
    const sft = await dumpBatch((await run(cfgOf('grpo,regft', { 'regft.iters': '1', epochs: '4', lr: '0.1' }), 1)).t);
    const kept = sft.trajs.filter((tr) => tr.kept).flatMap((tr) => tr.tokens);
    expect(kept.some((x) => x.ratio > 1.2)).toBe(true);
    for (const x of kept) {
      expect(x.clip).toBe(0);
      expect(x.loss).toBeGreaterThanOrEqual(0);
    }
  },
  pfppo() {
    // max_min within a group: only the best and the worst rollouts are ever drawn.
    const counts = pfppoCounts(f32([0.9, 0.5, 0.4, 0.1]), Uint8Array.of(1, 1, 1, 1), 4, { weighting: 'max_min', pow: 2, scope: 'group' }, createRng(1));
    expect(counts[1]! + counts[2]!).toBe(0);
    expect(counts[0]! + counts[3]!).toBe(4);
  },
  async zerosearch() {
    const cfg = cfgOf('grpo,zerosearch', { 'zerosearch.iters': '10', 'zerosearch.pEnd': '0.8' });
    const env = resolvePlan(cfg).envConfig.env;
    expect([env.noiseSchedule, env.noise, env.noiseIters]).toEqual(['exp', 0.8, 10]);
  },
  dars() {
    // docs/METHODS.md 5.7's worked example: N = 8, a = 1/8, no std: ET 11 extra rollouts, HW 24.
    expect(darsExtra(1 / 8, 8, { schedule: 'ET', useStd: false, nMax: 64 })).toBe(11);
    expect(darsExtra(1 / 8, 8, { schedule: 'HW', useStd: false, nMax: 64 })).toBe(24);
    expect(darsExtra(1 / 2, 8, { schedule: 'ET', useStd: false, nMax: 64 })).toBe(0);
    expect(darsExtra(0, 8, { schedule: 'HW', useStd: false, nMax: 32 })).toBe(24);
  },
  async seeupo() {
    // Stage k trains turn k only: rows of other turns get no gradient.
    const adv = f32([1, 1, 1, 1]);
    const logp = f32([0.1, 0.1, -0.1, -0.1]);
    const z = new Float32Array(4);
    const seqLog = seqRatioCpu(f32([1, 1, 1, 1]), logp, z, adv, { mode: 'turn', tp: 4, actionLen: 2, maxTurns: 2 });
    const out = ppoLossCpu(logp, z, z, adv, f32([0.25, 0.25, 0.25, 0.25]), { clipLow: 0.2, clipHigh: 0.2, dualClip: 3, klCoef: 0, ratioMode: RATIO_MODES.turn, tp: 4, actionLen: 2, maxTurns: 2, stage: 1 }, seqLog);
    expect(Array.from(out.dlogp.subarray(0, 2))).toEqual([0, 0]);
    expect(out.dlogp[2]).not.toBe(0);
    const { rows } = await run(cfgOf('grpo,seeupo'), 1);
    expect(Number.isFinite(rows[0]!.loss)).toBe(true);
  },
  async sampo() {
    const p = resolvePlan(cfgOf('sampo'));
    // As its reference trains on step rows: GSPO's ratio and seq-mean-token-mean per step, KL 0.01 k3.
    expect([p.ratio.mode, p.advantage.estimator, p.lossAgg, p.stepRows]).toEqual(['step', 'gigpo', 'seq-mean-token-mean', true]);
    expect(p.kl).toEqual({ coef: 0.01, type: 'k3' });
    // GiGPO: two rollouts that reach the same state get step advantages relative to each other.
    const adv = advantageCpu(
      {
        reward: f32([1, 0]),
        ...groupLayout([2]),
        turns: Uint32Array.of(2, 2),
        turnReward: f32([0, 1, 0, 0]),
        turnKey: Uint32Array.of(7, 9, 7, 9),
        mask: f32([1, 1, 1, 1]),
      },
      { ...ADVANTAGE_DEFAULTS, estimator: 'gigpo', scaleStd: false, stepWeight: 1, gamma: 1 },
      shape(2, 2, 1, 2),
    );
    expect(adv[0]).toBeCloseTo(0.5 + 0.5, 6);
    expect(adv[2]).toBeCloseTo(-0.5 - 0.5, 6);
  },
  async vcpo() {
    // Stale rollouts: the ESS of pi_old/mu drops below 1 and the lr is scaled down by sqrt of it.
    const { rows } = await run(cfgOf('vcpo', { staleness: '2', lr: '0.05' }), 4);
    const last = rows[3]!;
    expect(last.ess_rollout).toBeLessThan(1);
    expect(last.lr).toBeCloseTo(0.05 * Math.sqrt(last.ess_rollout), 6);
    expect(rows[0]!.ess_rollout).toBeCloseTo(1, 6);
    // Per optimizer step, as the reference: each step's ESS from its own minibatch's IS weights at
    // the step's own parameters, log pi_step - log mu (recomputed here from the dump, whose logp is
    // each row's last step's), and the step's lr scaled by it.
    const essOf = (xs: number[]) => {
      const m = Math.max(...xs);
      const s1 = xs.reduce((s, x) => s + Math.exp(x - m), 0);
      const s2 = xs.reduce((s, x) => s + Math.exp(2 * (x - m)), 0);
      return (s1 * s1) / s2 / xs.length;
    };
    const logISOf = (d: BatchDump) =>
      d.trajs.map((tr) => tr.tokens.reduce((s, k) => s + Math.min(Math.max(k.logp - k.logp_rollout!, -20), 20), 0));
    const two = await run(cfgOf('vcpo', { staleness: '2', lr: '0.05', minibatches: '2' }), 4);
    const d = await dumpBatch(two.t);
    const logIS = logISOf(d);
    const live = (mb: number) => d.trajs.flatMap((tr, n) => (tr.minibatch === mb && tr.tokens.length > 0 ? [logIS[n]!] : []));
    for (const mb of [0, 1]) {
      expect(d.ess_minibatch![mb]).toBeCloseTo(essOf(live(mb)), 4);
      expect(d.lr_minibatch![mb]).toBeCloseTo(0.05 * Math.sqrt(Math.min(1, d.ess_minibatch![mb]!)), 6);
    }
    expect(d.ess_minibatch![0]).not.toBe(d.ess_minibatch![1]);
    // Two epochs of fresh rollouts: the first step's parameters are the rollout's (ESS 1, the full
    // lr); the second's have moved, so its ESS is below 1 and its lr smaller.
    const epochs = await run(cfgOf('vcpo', { epochs: '2', lr: '0.05' }), 1);
    const e = await dumpBatch(epochs.t);
    expect(e.ess_minibatch).toHaveLength(2);
    expect(e.ess_minibatch![0]).toBeCloseTo(1, 6);
    expect(e.lr_minibatch![0]).toBeCloseTo(0.05, 8);
    const second = essOf(logISOf(e).filter((_, n) => e.trajs[n]!.tokens.length > 0));
    expect(second).toBeLessThan(0.999);
    expect(e.ess_minibatch![1]).toBeCloseTo(second, 4);
    expect(e.lr_minibatch![1]).toBeCloseTo(0.05 * Math.sqrt(second), 6);
    expect(epochs.rows[0]!.lr).toBeCloseTo((0.05 + 0.05 * Math.sqrt(second)) / 2, 6);
    // The baseline weighs each trajectory by its own gradient norm (tests/unit/trajGradNorm.test.ts
    // has the hand case and the checks against the gradient); the closed-form proxy is an option.
    expect(resolvePlan(cfgOf('vcpo')).advantage.trueGradNorm).toBe(true);
    expect(resolvePlan(cfgOf('vcpo', { 'vcpo.gradNorm': 'proxy' })).advantage.trueGradNorm).toBe(false);
  },
  async prorl() {
    // The reference restarts from the current policy: the KL falls back after each reset.
    const { rows } = await run(cfgOf('grpo,prorl', { 'prorl.resetEvery': '3', lr: '0.05' }), 4);
    expect(rows[2]!.kl_ref).toBeGreaterThan(0);
    expect(rows[3]!.kl_ref).toBeLessThan(rows[2]!.kl_ref);
  },
  async gigpo() {
    // The step-level estimator alone: GiGPO's advantages and anchor keys, nothing else of SAMPO's.
    const p = resolvePlan(cfgOf('gigpo'));
    expect([p.advantage.estimator, p.advantage.scaleStd, p.advantage.gamma, p.anchors, p.stepRows, p.ratio.mode, p.lossAgg, p.dynamicSampling]).toEqual(['gigpo', true, 0.95, true, false, 'token', 'token-mean', null]);
    // Two rollouts through the same two states (keys 7, 9), outcomes 1 and 0, gamma 1. Episode part
    // over the step rows {1, 1, 0, 0}: mean 0.5, unbiased std sqrt(1/3), so +-0.5 sqrt(3). Step
    // returns 1, 1 and 0, 0: each anchor set {1, 0} has mean 0.5, so +-0.5.
    const adv = advantageCpu(
      { reward: f32([1, 0]), ...groupLayout([2]), turns: Uint32Array.of(2, 2), turnReward: f32([0, 1, 0, 0]), turnKey: Uint32Array.of(7, 9, 7, 9), mask: f32([1, 1, 1, 1]) },
      { ...ADVANTAGE_DEFAULTS, ...p.advantage, gamma: 1 },
      shape(2, 2, 1, 2),
    );
    expect(adv[0]).toBeCloseTo(0.5 * Math.sqrt(3) + 0.5, 5);
    expect(adv[1]).toBeCloseTo(0.5 * Math.sqrt(3) + 0.5, 5);
    expect(adv[2]).toBeCloseTo(-0.5 * Math.sqrt(3) - 0.5, 5);
    const { rows } = await run(cfgOf('gigpo'), 1);
    expect(Number.isFinite(rows[0]!.adv_std)).toBe(true);
  },
  async dynfilter() {
    // The filter alone: no clip or aggregation change, and it goes with CISPO (DAPO does not).
    const p = resolvePlan(cfgOf('grpo,dynfilter'));
    expect([p.ratio, p.lossAgg, p.dynamicSampling]).toEqual([{ mode: 'token', clipLow: 0.2, clipHigh: 0.2, dualClip: 3 }, 'token-mean', { maxGenBatches: 3, from: 1 }]);
    expect(cfgOf('grpo,cispo,dynfilter').methods).toEqual(['grpo', 'cispo', 'dynfilter']);
    expect(() => cfgOf('grpo,dapo,dynfilter')).toThrow(/conflicts/);
    const { rows } = await run(cfgOf('grpo,dynfilter', { 'dynfilter.maxGenBatches': '10' }), 2);
    for (const r of rows) {
      expect(r.groups_all_equal_frac).toBe(0);
      expect(r.rollouts).toBeGreaterThan(16);
    }
  },
  async cispo() {
    // The clipped IS weight with its gradient stopped: a token whose ratio left the range keeps the
    // gradient -clip(r) A (PPO would give it 0). r = e^0.5 > 1.2 with A = 1: weight 1.2.
    const o = { clipLow: 0.2, clipHigh: 0.2, dualClip: 3, klCoef: 0, ratioMode: RATIO_MODES.cispo };
    const out = ppoLossCpu(f32([0.5, -0.5, 0.1]), f32([0, 0, 0]), f32([0.5, -0.5, 0.1]), f32([1, 1, -2]), f32([1, 1, 1]), o);
    expect(out.dlogp[0]).toBeCloseTo(-1.2, 6);
    expect(out.clip[0]).toBe(1);
    expect(out.dlogp[1]).toBeCloseTo(-0.8, 6); // e^-0.5 = 0.61 < 0.8: floored weight, still a gradient
    expect(out.clip[1]).toBe(-1);
    expect(out.dlogp[2]).toBeCloseTo(2 * Math.exp(0.1), 6); // inside the range: the weight is r
    expect(out.loss[0]).toBeCloseTo(-1.2 * 1 * 0.5, 6);
    const p = resolvePlan(cfgOf('grpo,cispo'));
    expect(p.ratio).toEqual({ mode: 'cispo', weightLow: 0.2, weightHigh: 0.2 });
    // Trains on the GPU-free path with several epochs.
    const { rows } = await run(cfgOf('grpo,cispo', { epochs: '3', lr: '0.05' }), 2);
    expect(rows.every((r) => Number.isFinite(r.loss))).toBe(true);
  },
  async sapo() {
    // The soft gate f(r) = sigmoid(tau (r - 1)) 4 / tau: at r = 1 it is 2 / tau, its slope is 1.
    const o = { clipLow: 1, clipHigh: 1.05, dualClip: 3, klCoef: 0, ratioMode: RATIO_MODES.sapo };
    const out = ppoLossCpu(f32([0, 0, 2]), f32([0, 0, 0]), f32([0, 0, 2]), f32([1, -1, 1]), f32([1, 1, 1]), o);
    expect(out.loss[0]).toBeCloseTo(-2, 6); // -f(1) A with tau 1
    expect(out.loss[1]).toBeCloseTo(2 / 1.05, 6); // tau_neg for A < 0
    expect(out.dlogp[0]).toBeCloseTo(-1, 6); // -4 A s (1 - s) r at r = 1: -1
    // r = e^2: the gradient has faded (no hard switch-off), s = sigmoid(e^2 - 1).
    const s = 1 / (1 + Math.exp(-(Math.exp(2) - 1)));
    expect(out.dlogp[2]).toBeCloseTo(-4 * s * (1 - s) * Math.exp(2), 6);
    expect(Math.abs(out.dlogp[2]!)).toBeLessThan(0.1);
    const p = resolvePlan(cfgOf('grpo,sapo'));
    expect([p.ratio, p.lossAgg]).toEqual([{ mode: 'sapo', tauPos: 1, tauNeg: 1.05 }, 'seq-mean-token-mean']);
    const { rows } = await run(cfgOf('grpo,sapo', { epochs: '3', lr: '0.05' }), 2);
    expect(rows.every((r) => Number.isFinite(r.loss))).toBe(true);
  },
  gmpo() {
    // The sign-aware log-space clip: a +3 log-ratio under A > 0 counts as +0.4 in the mean.
    const seqLog = seqRatioCpu(f32([1, 1]), f32([3, 0]), new Float32Array(2), f32([1, 1]), { mode: 'geometric', tp: 2, clipLow: 0.4, clipHigh: 0.4 });
    expect(seqLog[0]).toBeCloseTo(0.2, 6);
    expect(resolvePlan(cfgOf('grpo,gmpo')).ratio).toEqual({ mode: 'geometric', logClipLow: 0.4, logClipHigh: 0.4 });
  },
  otb() {
    expect(resolvePlan(cfgOf('otb')).advantage.otb).toBe(true);
  },
  async tis() {
    // Each token's loss is weighted by min(ρ, C): top-k truncation gives ρ < 1 on most tokens.
    const trajs = await mismatched('grpo,tis', { 'tis.threshold': '1.5' });
    for (const k of trajs.flat()) expect(k.is_weight!).toBeCloseTo(Math.min(Math.exp(k.lr), 1.5), 5);
    expect(trajs.flat().some((k) => k.is_weight! < 0.99)).toBe(true);
  },
  async seqis() {
    // One weight per rollout: min(∏ρ, C) on every token of it.
    for (const tr of await mismatched('grpo,seqis')) {
      const lr = tr.reduce((s, k) => s + k.lr, 0);
      for (const k of tr) expect(k.is_weight!).toBeCloseTo(Math.min(Math.exp(lr), 2), 5);
    }
  },
  async tokenrs() {
    // k1 with ρ in [1/1.1, 2]: a token leaves the loss iff −lr > log 1.1 (or < log 0.5).
    const toks = (await mismatched('grpo,tokenrs', { 'tokenrs.upper': '1.1' })).flat();
    for (const k of toks) expect(k.rs_keep).toBe(-k.lr > Math.log(1.1) || -k.lr < Math.log(0.5) ? 0 : 1);
    expect(toks.some((k) => k.rs_keep === 0) && toks.some((k) => k.rs_keep === 1)).toBe(true);
  },
  async seqrs() {
    // Seq-MIS: a rollout leaves whole when ∏ρ leaves [0.5, 2].
    const trajs = await mismatched('grpo,seqrs');
    expect(wholeRows(trajs)).toBe(true);
    for (const tr of trajs) expect(tr[0]!.rs_keep).toBe(Math.abs(tr.reduce((s, k) => s + k.lr, 0)) > Math.log(2) ? 0 : 1);
  },
  async geors() {
    // Geo-RS: the rollout's geometric-mean ratio must stay within [0.999, 1.001].
    const trajs = await mismatched('grpo,geors');
    expect(wholeRows(trajs)).toBe(true);
    for (const tr of trajs) expect(tr[0]!.rs_keep).toBe(Math.abs(tr.reduce((s, k) => s + k.lr, 0) / tr.length) > Math.log(1.001) ? 0 : 1);
  },
  async veto() {
    // A rollout with any token whose ρ is below tau leaves the loss whole.
    const trajs = await mismatched('grpo,veto', { 'veto.tau': '0.9' });
    expect(wholeRows(trajs)).toBe(true);
    for (const tr of trajs) expect(tr[0]!.rs_keep).toBe(tr.some((k) => k.lr < Math.log(0.9)) ? 0 : 1);
  },
  async drmas() {
    // Per-role statistics: the executor's x5 + 2 rewards normalize to the planner's scale.
    const adv = advantageCpu(
      {
        reward: f32([0, 0, 0, 0]),
        ...groupLayout([2, 2]),
        turns: Uint32Array.of(2, 2, 2, 2),
        turnRole: Int32Array.of(0, 1, 0, 1, 0, 1, 0, 1),
        roleRewards: f32([1, 7, 0, 2, 1, 7, 0, 2]),
        mask: f32([1, 1, 1, 1, 1, 1, 1, 1]),
      },
      { ...ADVANTAGE_DEFAULTS, byRole: true },
      shape(4, 2, 1, 2, 2),
    );
    expect(adv[0]).toBeCloseTo(adv[1]!, 5);
    const { rows } = await run(cfgOf('grpo,drmas', { task: 'roles' }), 1);
    expect(Number.isFinite(rows[0]!.grad_norm)).toBe(true);
  },
};

/** One iteration with a bf16, top-3 sampler (docs/METHODS.md 5.19): each trajectory's tokens with lr = ℓ_old − ℓ_μ. */
async function mismatched(methods: string, extra: Record<string, string> = {}) {
  const { t } = await run(cfgOf(methods, { 'rollout.precision': 'bf16', 'rollout.topK': '3', ...extra }), 1);
  return (await dumpBatch(t)).trajs.filter((tr) => tr.tokens.length > 0).map((tr) => tr.tokens.map((k) => ({ ...k, lr: k.logp_old - k.logp_rollout! })));
}
/** Whether every trajectory is kept or rejected whole, and some is rejected. */
const wholeRows = (trajs: Array<Array<{ rs_keep?: number }>>) => trajs.every((tr) => tr.every((k) => k.rs_keep === tr[0]!.rs_keep)) && trajs.some((tr) => tr[0]!.rs_keep === 0);

function shape(numTraj: number, tp: number, actionLen = tp, maxTurns = 1, nRoles = 1) {
  return { numTraj, tp, maxTurns, actionLen, nRoles };
}

describe('method registry', () => {
  it('every method has an entry, a paper id, an idea, a stage and a defining-behaviour test', () => {
    for (const id of METHOD_IDS) {
      const m = methodDef(id);
      expect(m.id).toBe(id);
      expect(m.paper).toMatch(/^\d{4}\.\d{5}$/);
      expect(m.idea.length).toBeGreaterThan(20);
      expect(DEFINING[id], `no defining test for ${id}`).toBeTypeOf('function');
    }
    expect(Object.keys(DEFINING).sort()).toEqual([...METHOD_IDS].sort());
  });
  it('conflicts are symmetric and refused naming both; one estimator exactly', () => {
    for (const a of METHOD_IDS) for (const b of conflictsOf(a)) expect(conflictsOf(b)).toContain(a);
    expect(() => withMethods(defaultConfig(), ['grpo', 'gspo', 'gmpo'])).toThrow(/(GSPO conflicts with GMPO|GMPO conflicts with GSPO): both set the importance ratio and its clip/);
    expect(() => withMethods(defaultConfig(), ['grpo', 'rloo'])).toThrow(/GRPO conflicts with RLOO: both are advantage estimators, and a run has exactly one/);
    // EDGE-GRPO scales a group advantage; PPO's GAE and OTB's token baseline have none, so its factor would be dropped silently.
    expect(() => withMethods(defaultConfig(), ['ppo', 'edge'])).toThrow(/conflicts with/);
    expect(() => withMethods(defaultConfig(), ['otb', 'edge'])).toThrow(/conflicts with/);
    expect(() => withMethods(defaultConfig(), ['dapo'])).toThrow(/one advantage estimator/);
    expect(ESTIMATOR_IDS).toContain('grpo');
  });
  it('a method on the wrong task is refused by name, in either order of the settings', () => {
    expect(() => withMethods(defaultConfig(), ['cm2'])).toThrow(ConfigError);
    expect(() => withMethods(defaultConfig(), ['cm2'])).toThrow(/CM2 needs the tools task/);
    const tools = withMethods(withField(defaultConfig(), 'task', 'tools'), ['cm2']);
    expect(() => withField(tools, 'task', 'search')).toThrow(/task: CM2 needs the tools task/);
    expect(parseConfig({ methods: ['cm2'], task: 'tools' }).methods).toEqual(['cm2']);
  });
  it('switching an estimator on in the UI replaces the active one', () => {
    expect(toggledMethods(['grpo', 'dapo'], 'rloo')).toEqual(['dapo', 'rloo']);
    expect(toggledMethods(['grpo', 'dapo'], 'gspo')).toEqual(['grpo', 'dapo', 'gspo']);
    expect(toggledMethods(['grpo', 'dapo'], 'dapo')).toEqual(['grpo']);
  });
  it("a toggle's blocker: the active estimator is a state, not an error; a refused set says why", () => {
    const cfg = cfgOf('grpo,gspo');
    expect(toggleBlocker(cfg, 'grpo')).toEqual({ kind: 'estimator', text: expect.stringMatching(/^The run's advantage estimator: .*exactly one/) });
    expect(toggleBlocker(cfg, 'grpo')!.text).not.toMatch(/none is active/);
    expect(toggleBlocker(cfg, 'rloo')).toBeNull();
    expect(toggleBlocker(cfg, 'gspo')).toBeNull();
    expect(toggleBlocker(cfg, 'gmpo')).toEqual({ kind: 'refused', text: 'GSPO conflicts with GMPO: both set the importance ratio and its clip and how token losses are averaged, each its own way. Switch one of them off.' });
    expect(toggleBlocker(cfg, 'cm2')).toEqual({ kind: 'refused', text: expect.stringMatching(/CM2 needs the tools task/) });
  });
});

describe('defining behaviour of each method', () => {
  for (const id of METHOD_IDS) it(id, async () => DEFINING[id]!());
});

describe('settings the methods replace', () => {
  it('are listed with the value the run uses', async () => {
    const { overriddenFields } = await import('../../workers/core/plan');
    expect(overriddenFields(cfgOf('grpo'))).toEqual([]);
    expect(overriddenFields(cfgOf('grpo,dapo'))).toEqual([{ key: 'clipHigh', value: 0.28 }]);
    expect(overriddenFields(cfgOf('grpo,zerosearch')).map((f) => f.key)).toEqual(['env.noise', 'env.noiseSchedule']);
  });
});
