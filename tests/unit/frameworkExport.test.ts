/**
 * "Take it to a real run": verl overrides and a TRL GRPOConfig from a RunConfig. Option names are
 * pinned to the frameworks' own sources; every playground setting is accounted for (set, already
 * the framework's behaviour, or listed as having no equivalent); methods map themselves.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { allFields, defaultConfig, withField, withMethods, type RunConfig } from '../../workers/core/config';
import { exportedKeys, exportToTrl, exportToVerl, FRAMEWORKS, exportToFramework, LLM_LR, LLM_PROMPTS_PER_STEP, type FrameworkExport } from '../../workers/formats/frameworkExport';
import { methodDef, METHOD_IDS } from '../../workers/core/methods';
import type { ParamSpec, ParamValue } from '../../workers/core/methods/params';
import { createEnv } from '../../workers/core/envs';
import { createRng } from '../../workers/core/rng';

/** Paths in verl's `verl/trainer/config/_generated_ppo_trainer.yaml` (checked against verl main). */
const VERL_OPTIONS = new Set([
  'algorithm.adv_estimator',
  'algorithm.norm_adv_by_std_in_grpo',
  'algorithm.use_kl_in_reward',
  'data.train_batch_size',
  'actor_rollout_ref.rollout.n',
  'actor_rollout_ref.rollout.temperature',
  // The rollout sampler's (docs/METHODS.md 5.19: verl's rollout.yaml).
  'actor_rollout_ref.rollout.dtype',
  'actor_rollout_ref.rollout.top_p',
  'actor_rollout_ref.rollout.top_k',
  'actor_rollout_ref.actor.optim.lr',
  'actor_rollout_ref.actor.optim.betas',
  'actor_rollout_ref.actor.optim.weight_decay',
  'actor_rollout_ref.actor.optim.clip_grad',
  'actor_rollout_ref.actor.ppo_epochs',
  'actor_rollout_ref.actor.ppo_mini_batch_size',
  'actor_rollout_ref.actor.clip_ratio_low',
  'actor_rollout_ref.actor.clip_ratio_high',
  'actor_rollout_ref.actor.clip_ratio_c',
  'actor_rollout_ref.actor.loss_agg_mode',
  'actor_rollout_ref.actor.loss_scale_factor',
  'actor_rollout_ref.actor.use_kl_loss',
  'actor_rollout_ref.actor.kl_loss_coef',
  'actor_rollout_ref.actor.kl_loss_type',
  'actor_rollout_ref.actor.policy_loss.loss_mode',
  // PF-PPO (verl's AlgoConfig: use_pf_ppo, pf_ppo.reweight_method, pf_ppo.weight_pow).
  'algorithm.use_pf_ppo',
  'algorithm.pf_ppo.reweight_method',
  'algorithm.pf_ppo.weight_pow',
  // Rollout Correction (docs/METHODS.md 5.19: verl's algorithm.py RolloutCorrectionConfig, rollout.yaml).
  'algorithm.rollout_correction.rollout_is',
  'algorithm.rollout_correction.rollout_is_threshold',
  'algorithm.rollout_correction.rollout_is_batch_normalize',
  'algorithm.rollout_correction.rollout_rs',
  'algorithm.rollout_correction.rollout_rs_threshold',
  'actor_rollout_ref.rollout.calculate_log_probs',
]);

/** Fields of TRL's GRPOConfig (`trl/trainer/grpo_config.py`) and the TrainingArguments it extends. */
const TRL_OPTIONS = new Set([
  'num_generations',
  'steps_per_generation',
  'temperature',
  'learning_rate',
  'num_iterations',
  'epsilon',
  'epsilon_high',
  'delta',
  'beta',
  'loss_type',
  'scale_rewards',
  'max_completion_length',
  'importance_sampling_level',
  // The vLLM sampler's correction (grpo_config.py, docs/METHODS.md 5.19).
  'vllm_importance_sampling_correction',
  'vllm_importance_sampling_mode',
  'vllm_importance_sampling_clip_max',
  // TrainingArguments
  'seed',
  'per_device_train_batch_size',
  'gradient_accumulation_steps',
  'lr_scheduler_type',
  'adam_beta1',
  'adam_beta2',
  'weight_decay',
  'max_grad_norm',
]);
const VERL_LOSS_AGG = ['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum', 'seq-mean-token-sum-norm'];
const TRL_LOSS_TYPES = ['grpo', 'dr_grpo', 'dapo', 'bnpo', 'cispo', 'sapo', 'luspo', 'vespo'];

function cfgOf(values: Record<string, ParamValue>): RunConfig {
  let cfg = defaultConfig();
  for (const [k, v] of Object.entries(values)) cfg = withField(cfg, k, v);
  return cfg;
}

/** Policy-token slots per trajectory of the config's task (turns x action tokens). */
function policyTokens(cfg: RunConfig): number {
  const l = createEnv(cfg).layout;
  return l.maxTurns * l.actionLen;
}

function setting(out: FrameworkExport, key: string) {
  return out.settings.find((s) => s.key === key)?.value;
}

/** Every playground key lands in exactly one bucket: carried by a setting, matched, or no equivalent. */
function expectAccounted(cfg: RunConfig, out: FrameworkExport) {
  const carried = new Set(out.settings.flatMap((s) => s.from));
  const matched = new Set(out.matches.map((m) => m.key));
  const missing = new Set(out.noEquivalent.map((m) => m.key));
  for (const key of exportedKeys(cfg)) {
    const buckets = [carried.has(key), matched.has(key), missing.has(key)].filter(Boolean).length;
    expect(buckets, `${out.framework}: ${key}`).toBe(1);
  }
  const keys = out.settings.map((s) => s.key);
  expect(new Set(keys).size, `${out.framework}: an option set twice`).toBe(keys.length);
}

function randomConfig(seed: number): RunConfig {
  const rng = createRng(seed);
  let cfg = defaultConfig();
  for (const [key, spec] of allFields() as Array<[string, ParamSpec]>) {
    if (rng.next() < 0.6) continue;
    let v: ParamValue;
    if (spec.kind === 'bool') v = rng.next() < 0.5;
    else if (spec.kind === 'choice') v = spec.options[rng.int(spec.options.length)]!;
    else if (spec.kind === 'int') v = spec.min + rng.int(Math.min(spec.max - spec.min + 1, 20));
    else v = rng.next() < 0.2 ? spec.min : spec.min + rng.next() * (spec.max - spec.min);
    cfg = withField(cfg, key, v);
  }
  return cfg;
}

describe('verl overrides', () => {
  it('maps the default GRPO config onto verl option names', () => {
    const D = defaultConfig();
    const out = exportToVerl(D);
    expect(setting(out, 'algorithm.adv_estimator')).toBe('grpo');
    // An LLM run's learning rate and batch, never the toy's, which the notes name.
    expect(setting(out, 'data.train_batch_size')).toBe(LLM_PROMPTS_PER_STEP);
    expect(setting(out, 'actor_rollout_ref.rollout.n')).toBe(D.group);
    expect(setting(out, 'actor_rollout_ref.actor.optim.lr')).toBe(LLM_LR);
    expect(out.notes.some((n) => n.includes(`playground's ${D.lr}`))).toBe(true);
    expect(out.notes.some((n) => n.includes(`playground's ${D.batch}`))).toBe(true);
    const toy = exportToVerl(D, { scale: 'toy' });
    expect([setting(toy, 'data.train_batch_size'), setting(toy, 'actor_rollout_ref.actor.optim.lr'), setting(toy, 'actor_rollout_ref.actor.ppo_mini_batch_size')]).toEqual([D.batch, D.lr, D.batch]);
    expect(setting(out, 'actor_rollout_ref.actor.optim.weight_decay')).toBe(0);
    expect(setting(out, 'actor_rollout_ref.actor.clip_ratio_low')).toBe(0.2);
    expect(setting(out, 'actor_rollout_ref.actor.clip_ratio_high')).toBe(0.2);
    expect(setting(out, 'actor_rollout_ref.actor.clip_ratio_c')).toBe(3);
    expect(setting(out, 'actor_rollout_ref.actor.loss_agg_mode')).toBe('token-mean');
    expect(setting(out, 'actor_rollout_ref.actor.use_kl_loss')).toBe(false);
    expect(setting(out, 'actor_rollout_ref.actor.kl_loss_coef')).toBeUndefined();
    expect(setting(out, 'algorithm.norm_adv_by_std_in_grpo')).toBe(true);
    expect(setting(out, 'actor_rollout_ref.actor.ppo_epochs')).toBe(1);
    expect(setting(out, 'actor_rollout_ref.actor.ppo_mini_batch_size')).toBe(LLM_PROMPTS_PER_STEP);
    expect(out.text.split('\n')[0]).toBe('python3 -m verl.trainer.main_ppo \\');
    expect(out.text).toContain(`    actor_rollout_ref.actor.optim.betas='[${D.beta1},${D.beta2}]' \\\n`);
    expect(out.text).toContain('    algorithm.norm_adv_by_std_in_grpo=True \\\n');
    expect(out.text.endsWith('\\')).toBe(false);
    // Every line but the last continues.
    const lines = out.text.split('\n');
    for (const l of lines.slice(0, -1)) expect(l.endsWith(' \\')).toBe(true);
    expect(out.noEquivalent.map((n) => n.key)).toEqual(expect.arrayContaining(['task', 'env.values', 'model.hidden', 'seed']));
    expect(out.matches.map((n) => n.key)).toEqual(expect.arrayContaining(['grpo.unbiasedStd', 'grpo.eps', 'methods']));
  });

  it('follows the knobs: KL loss, Dr. GRPO, DAPO clip-higher, epochs, minibatches, dual clip', () => {
    const kl = exportToVerl(cfgOf({ klCoef: 0.001 }));
    expect(setting(kl, 'actor_rollout_ref.actor.use_kl_loss')).toBe(true);
    expect(setting(kl, 'actor_rollout_ref.actor.kl_loss_coef')).toBe(0.001);
    expect(setting(kl, 'actor_rollout_ref.actor.kl_loss_type')).toBe('low_var_kl');
    expect(setting(kl, 'algorithm.use_kl_in_reward')).toBe(false);

    const dr_cfg = cfgOf({ lossAgg: 'seq-mean-token-sum-norm', 'grpo.scaleStd': false });
    const dr = exportToVerl(dr_cfg);
    expect(setting(dr, 'actor_rollout_ref.actor.loss_agg_mode')).toBe('seq-mean-token-sum-norm');
    expect(setting(dr, 'actor_rollout_ref.actor.loss_scale_factor')).toBe(policyTokens(dr_cfg));
    expect(setting(dr, 'algorithm.norm_adv_by_std_in_grpo')).toBe(false);

    const dapo = exportToVerl(cfgOf({ clipHigh: 0.28, epochs: 2, minibatches: 4, batch: 8 }));
    expect(setting(dapo, 'actor_rollout_ref.actor.clip_ratio_high')).toBe(0.28);
    expect(setting(dapo, 'actor_rollout_ref.actor.ppo_epochs')).toBe(2);
    expect(setting(dapo, 'actor_rollout_ref.actor.ppo_mini_batch_size')).toBe(LLM_PROMPTS_PER_STEP / 4);

    const uneven = exportToVerl(cfgOf({ minibatches: 3, batch: 16 }), { scale: 'toy' });
    expect(uneven.noEquivalent.find((n) => n.key === 'minibatches')?.reason).toMatch(/3 minibatches do not divide 16 prompts/);
    // GMPO's clip is still exported to verl (geo_mean reads clip_ratio_* in log space), SeeUPO's per-turn clip is not.
    expect(setting(exportToVerl(withMethods(defaultConfig(), ['grpo', 'gmpo'])), 'actor_rollout_ref.actor.clip_ratio_high')).toBe(0.4);
    expect(setting(exportToVerl(withMethods(defaultConfig(), ['grpo', 'seeupo'])), 'actor_rollout_ref.actor.clip_ratio_high')).toBeUndefined();
    expect(exportToVerl(cfgOf({ dualClip: 1 })).noEquivalent.find((n) => n.key === 'dualClip')?.reason).toMatch(/clip_ratio_c > 1/);
    expect(exportToVerl(cfgOf({ maxGradNorm: 0 })).noEquivalent.find((n) => n.key === 'maxGradNorm')).toBeDefined();
    expect(exportToVerl(cfgOf({ 'grpo.eps': 0.01 })).noEquivalent.find((n) => n.key === 'grpo.eps')?.reason).toMatch(/1e-6/);
  });
});

describe('TRL GRPOConfig', () => {
  it('maps the default GRPO config onto GRPOConfig arguments', () => {
    const D = defaultConfig();
    const out = exportToTrl(D);
    expect(setting(out, 'num_generations')).toBe(D.group);
    // LLM-sane: 256 prompts x G per generation, 8 per device, accumulated to one optimizer step.
    const gen = LLM_PROMPTS_PER_STEP * D.group;
    expect(setting(out, 'per_device_train_batch_size')).toBe(8);
    expect(setting(out, 'gradient_accumulation_steps')).toBe(gen / 8);
    expect(setting(out, 'steps_per_generation')).toBe(gen / 8);
    expect(setting(out, 'learning_rate')).toBe(LLM_LR);
    const toy = exportToTrl(D, { scale: 'toy' });
    expect([setting(toy, 'per_device_train_batch_size'), setting(toy, 'steps_per_generation'), setting(toy, 'gradient_accumulation_steps'), setting(toy, 'learning_rate')]).toEqual([D.batch * D.group, 1, 1, D.lr]);
    expect(setting(out, 'lr_scheduler_type')).toBe('constant');
    expect(setting(out, 'epsilon')).toBe(0.2);
    expect(setting(out, 'epsilon_high')).toBe(0.2);
    expect(setting(out, 'delta')).toBe(3);
    expect(setting(out, 'beta')).toBe(0);
    expect(setting(out, 'loss_type')).toBe('bnpo');
    expect(setting(out, 'scale_rewards')).toBe('group');
    expect(setting(out, 'num_iterations')).toBe(1);
    expect(setting(out, 'temperature')).toBe(1);
    expect(setting(out, 'max_grad_norm')).toBe(1);
    // Never both generation_batch_size and steps_per_generation (TRL refuses that).
    expect(setting(out, 'generation_batch_size')).toBeUndefined();
    const lines = out.text.split('\n');
    expect(lines.slice(0, 3)).toEqual(['from trl import GRPOConfig', '', 'training_args = GRPOConfig(']);
    expect(lines[lines.length - 1]).toBe(')');
    for (const l of lines.slice(3, -1)) expect(l).toMatch(/^ {4}[a-z_0-9]+=(True|False|"[^"]*"|-?[\d.e+-]+),$/);
    expect(out.noEquivalent.map((n) => n.key)).toEqual(expect.arrayContaining(['task', 'model.hidden', 'grpo.eps']));
  });

  it('follows the knobs: loss types, Dr. GRPO scaling, minibatches, KL, dual clip', () => {
    expect(setting(exportToTrl(cfgOf({ lossAgg: 'seq-mean-token-mean' })), 'loss_type')).toBe('grpo');
    const drCfg = cfgOf({ lossAgg: 'seq-mean-token-sum-norm', 'grpo.scaleStd': false });
    const dr = exportToTrl(drCfg);
    expect(setting(dr, 'loss_type')).toBe('dr_grpo');
    expect(setting(dr, 'max_completion_length')).toBe(policyTokens(drCfg));
    expect(setting(dr, 'scale_rewards')).toBe('none');
    expect(exportToTrl(cfgOf({ lossAgg: 'seq-mean-token-sum' })).noEquivalent.some((n) => n.key === 'lossAgg')).toBe(true);
    const mb = exportToTrl(cfgOf({ minibatches: 4, epochs: 3, batch: 16, group: 8 }), { scale: 'toy' });
    expect(setting(mb, 'per_device_train_batch_size')).toBe(32);
    expect(setting(mb, 'steps_per_generation')).toBe(4);
    // GMPO's log-space clip is never exported as TRL's (ratio) epsilon.
    const gmpo = exportToTrl(withMethods(defaultConfig(), ['grpo', 'gmpo']));
    expect([setting(gmpo, 'epsilon'), setting(gmpo, 'epsilon_high')]).toEqual([undefined, undefined]);
    expect(gmpo.noEquivalent.find((n) => n.key === 'clipLow')?.reason).toMatch(/not what TRL's epsilon means/);
    expect(setting(mb, 'num_iterations')).toBe(3);
    expect(exportToTrl(cfgOf({ minibatches: 3, batch: 16, group: 8 })).noEquivalent.some((n) => n.key === 'minibatches')).toBe(true);
    expect(setting(exportToTrl(cfgOf({ klCoef: 0.04 })), 'beta')).toBe(0.04);
    const lowC = exportToTrl(cfgOf({ dualClip: 1.1 }));
    expect(setting(lowC, 'delta')).toBeUndefined();
    expect(lowC.noEquivalent.find((n) => n.key === 'dualClip')?.reason).toMatch(/1 \+ epsilon_high/);
    expect(exportToTrl(cfgOf({ 'grpo.eps': 1e-4 })).matches.some((n) => n.key === 'grpo.eps')).toBe(true);
    expect(exportToTrl(cfgOf({ 'grpo.unbiasedStd': false })).noEquivalent.some((n) => n.key === 'grpo.unbiasedStd')).toBe(true);
  });
});

describe('both frameworks', () => {
  it('use only real option names and values, and account for every setting, on many random configs', () => {
    for (let seed = 0; seed < 200; seed++) {
      const cfg = randomConfig(seed);
      for (const fw of FRAMEWORKS) {
        const out = exportToFramework(cfg, fw);
        const known = fw === 'verl' ? VERL_OPTIONS : TRL_OPTIONS;
        for (const s of out.settings) expect(known.has(s.key), `${fw}: ${s.key}`).toBe(true);
        expectAccounted(cfg, out);
        const agg = setting(out, fw === 'verl' ? 'actor_rollout_ref.actor.loss_agg_mode' : 'loss_type');
        if (agg !== undefined) expect(fw === 'verl' ? VERL_LOSS_AGG : TRL_LOSS_TYPES).toContain(agg);
        for (const s of out.settings) {
          if (typeof s.value === 'number') expect(Number.isFinite(s.value), s.key).toBe(true);
        }
        expect(out.text).not.toMatch(/undefined|NaN|\[object/);
      }
    }
  });
});

describe('the rollout sampler', () => {
  it('verl gets its dtype, top_p and top_k where they are set; fp32 and TRL are listed as having no equivalent', () => {
    let cfg = defaultConfig();
    const verl0 = exportToVerl(cfg);
    expect(verl0.settings.map((s) => s.key).filter((k) => /top_|dtype/.test(k))).toEqual([]);
    expect(verl0.noEquivalent.map((n) => n.key)).toContain('rollout.precision');
    expect(verl0.matches.map((m) => m.key)).toEqual(expect.arrayContaining(['rollout.topP', 'rollout.topK']));
    cfg = withField(withField(withField(cfg, 'rollout.precision', 'bf16'), 'rollout.topP', 0.8), 'rollout.topK', 20);
    const verl = exportToVerl(cfg);
    expect(setting(verl, 'actor_rollout_ref.rollout.dtype')).toBe('bfloat16');
    expect(setting(verl, 'actor_rollout_ref.rollout.top_p')).toBe(0.8);
    expect(setting(verl, 'actor_rollout_ref.rollout.top_k')).toBe(20);
    expect(verl.text).toContain('actor_rollout_ref.rollout.top_p=0.8');
    expect(setting(exportToVerl(withField(cfg, 'rollout.precision', 'fp16')), 'actor_rollout_ref.rollout.dtype')).toBe('float16');
    const trl = exportToTrl(cfg);
    expect(trl.noEquivalent.map((n) => n.key)).toEqual(expect.arrayContaining(['rollout.precision', 'rollout.topP', 'rollout.topK']));
  });
});

describe('every method of the registry', () => {
  it('exports real options, accounts for its parameters, and carries the values the run uses', () => {
    for (const id of METHOD_IDS) {
      const def = methodDef(id);
      let cfg = defaultConfig();
      if (def.tasks) cfg = withField(cfg, 'task', def.tasks[0]!);
      cfg = withMethods(cfg, def.estimator ? [id] : ['grpo', id]);
      for (const fw of FRAMEWORKS) {
        const out = exportToFramework(cfg, fw);
        const known = fw === 'verl' ? VERL_OPTIONS : TRL_OPTIONS;
        for (const s of out.settings) expect(known.has(s.key), `${id} ${fw}: ${s.key}`).toBe(true);
        expectAccounted(cfg, out);
      }
    }
    // DAPO's clip-higher reaches both frameworks; Dr. GRPO's aggregation too.
    const dapo = withMethods(defaultConfig(), ['grpo', 'dapo']);
    expect(setting(exportToFramework(dapo, 'verl'), 'actor_rollout_ref.actor.clip_ratio_high')).toBe(0.28);
    expect(setting(exportToFramework(dapo, 'trl'), 'epsilon_high')).toBe(0.28);
    const dr = withMethods(defaultConfig(), ['drgrpo']);
    expect(setting(exportToFramework(dr, 'trl'), 'loss_type')).toBe('dr_grpo');
    expect(setting(exportToFramework(withMethods(defaultConfig(), ['ppo']), 'verl'), 'algorithm.adv_estimator')).toBe('gae');
  });
});

describe('registry-driven method mappings', () => {
  const grpo = methodDef('grpo');
  const own = grpo.frameworks;
  afterEach(() => {
    grpo.frameworks = own;
  });

  it("a method's `frameworks` field is what the export uses, and null means no equivalent", () => {
    grpo.frameworks = {
      verl: (p) => ({ set: [{ key: 'algorithm.adv_estimator', value: 'grpo_custom', from: ['grpo.scaleStd', 'grpo.unbiasedStd', 'grpo.eps'] }], matches: [] }),
      trl: null,
    };
    const verl = exportToVerl(defaultConfig());
    expect(setting(verl, 'algorithm.adv_estimator')).toBe('grpo_custom');
    expect(verl.text).toContain('algorithm.adv_estimator=grpo_custom');
    const trl = exportToTrl(defaultConfig());
    expect(trl.noEquivalent.find((n) => n.key === 'methods')?.reason).toBe('GRPO (grpo) has no TRL equivalent: no mapping written');
    for (const p of Object.keys(grpo.params)) expect(trl.noEquivalent.some((n) => n.key === `grpo.${p}`)).toBe(true);
    expect(setting(trl, 'scale_rewards')).toBeUndefined();
  });
});
