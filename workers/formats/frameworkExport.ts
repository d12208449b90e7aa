/**
 * "Take it to a real run": the current RunConfig as verl command-line overrides and as a TRL
 * `GRPOConfig(...)` snippet, with every setting that has no equivalent there listed with a reason.
 *
 * Option names were checked against the frameworks' own sources: verl
 * `verl/trainer/config/_generated_ppo_trainer.yaml`, `actor/actor.yaml`, `optim/fsdp.yaml`,
 * `docs/algo/grpo.md`, `core_algos.py::agg_loss`; TRL `trl/trainer/grpo_config.py` and
 * `grpo_trainer.py::_compute_loss` (docs/METHODS.md 1.3-1.5, 4.2-4.4). Every playground key of the config
 * (and of each active method) ends up in exactly one place: a setting, a "matches the framework's
 * built-in behaviour" line, or the no-equivalent list; a unit test checks that nothing is dropped.
 *
 * Each method maps itself through the `frameworks` field of its entry in workers/core/methods/.
 */
import { CONFIG_FIELDS, getField, type RunConfig } from '../core/config';
import { createEnv } from '../core/envs';
import { methodDef } from '../core/methods';
import { ratioSlots, resolvePlan } from '../core/plan';
import type { FrameworkValue } from '../core/methods/registry';

import { FRAMEWORK_NAMES, type Framework } from './frameworkNames';
export { FRAMEWORK_NAMES, FRAMEWORKS, type Framework } from './frameworkNames';

export interface FrameworkSetting {
  /** The framework's option: a verl override path or a GRPOConfig argument. */
  key: string;
  value: FrameworkValue;
  /** Playground keys this option carries (config keys, `<method>.<param>`); empty if implied. */
  from: string[];
}

export interface KeyNote {
  /** A playground key (`env.values`, `grpo.eps`, `methods`). */
  key: string;
  /** Its value here, as text. */
  value: string;
  reason: string;
}

export interface FrameworkExport {
  framework: Framework;
  settings: FrameworkSetting[];
  /** Ready to paste: a verl command line, or a Python snippet. */
  text: string;
  /** Settings that need no option because they already match the framework's behaviour. */
  matches: KeyNote[];
  /** Settings with no equivalent in the framework. */
  noEquivalent: KeyNote[];
  /** Caveats about options that are set (approximations, assumptions). */
  notes: string[];
  /**
   * The run's advantage estimator where the framework has none for it: what runs in its place
   * (always GRPO: verl's algorithm.adv_estimator=grpo, TRL's GRPOTrainer), and why.
   */
  fallback: EstimatorFallback | null;
}

export interface EstimatorFallback {
  /** The playground's estimator (`igpo`). */
  method: string;
  /** Its display name (`IGPO`). */
  name: string;
  /** What the framework runs instead. */
  runs: 'GRPO';
  /** Why the framework has no such estimator (the method entry's own words). */
  reason: string;
}

const TOY_TASK_REASON = 'a knob of a toy task; a real run trains on your own prompts and reward function';
const MODEL_REASON = {
  verl: "this playground's policy is a tiny MLP; a real run fine-tunes a pretrained LLM (actor_rollout_ref.model.path)",
  trl: "this playground's policy is a tiny MLP; a real run fine-tunes a pretrained LLM (GRPOTrainer's model argument)",
};

/** Policy-token slots per trajectory (turns x action tokens): the toy's "max response length". */
function policyTokens(cfg: RunConfig): number {
  try {
    const l = createEnv(cfg).layout;
    return l.maxTurns * l.actionLen;
  } catch {
    return cfg.env.maxTurns * 3; // every toy task writes 3-token actions
  }
}

/** Builds the settings of one framework; the text is rendered afterwards. */
/** A learning rate that fine-tunes a 0.5-7B model with GRPO without wrecking it (verl's and TRL's examples use 1e-6). */
export const LLM_LR = 1e-6;
/** Prompts per training step in verl's and TRL's GRPO examples (256-1024): the toy's 16 is a toy's. */
export const LLM_PROMPTS_PER_STEP = 256;
/** Completions one GPU holds per forward/backward at a few hundred tokens each. */
export const LLM_PER_DEVICE = 8;

export interface ExportOptions {
  /**
   * `llm` (default): the learning rate and batch sizes become values an LLM run can use, the toy's
   * own noted beside them; `toy`: the playground's values as they are (the recipe, which replays
   * the toy's own batches, translates them itself).
   */
  scale?: 'llm' | 'toy';
}

/** The largest divisor of n that is at most cap. */
function divisorAtMost(n: number, cap: number): number {
  for (let d = Math.min(n, cap); d > 1; d--) if (n % d === 0) return d;
  return 1;
}

/** The export as it is built: the options set, those that match or have no equivalent, and notes. */
interface Export {
  cfg: RunConfig;
  fw: Framework;
  llm: boolean;
  plan: ReturnType<typeof resolvePlan>;
  /** The values the run uses: an active method may set the clip, the KL coef or the aggregation. */
  eff: { clipLow: number; clipHigh: number; klCoef: number; lossAgg: RunConfig['lossAgg'] };
  /** Minibatches (at most one per completion) and the task's policy tokens per trajectory. */
  M: number;
  Tp: number;
  settings: FrameworkSetting[];
  matches: KeyNote[];
  noEquivalent: KeyNote[];
  notes: string[];
  set(key: string, value: FrameworkValue, from: string[]): void;
  none(key: string, reason: string): void;
  same(key: string, reason: string): void;
}

function build(cfg: RunConfig, fw: Framework, opts: ExportOptions = {}): Omit<FrameworkExport, 'text'> {
  const plan = resolvePlan(cfg);
  const val = (key: string) => String(key === 'methods' ? cfg.methods.join(',') : getField(cfg, key));
  const x: Export = {
    cfg,
    fw,
    llm: (opts.scale ?? 'llm') === 'llm',
    plan,
    // The clip slots verl's clip_ratio_* and TRL's epsilon carry: the bounds of the run's ratio mode.
    eff: { clipLow: ratioSlots(plan.ratio).clipLow, clipHigh: ratioSlots(plan.ratio).clipHigh, klCoef: plan.kl.coef, lossAgg: plan.lossAgg },
    M: Math.max(1, Math.min(cfg.minibatches, cfg.batch * cfg.group)),
    Tp: policyTokens(cfg),
    settings: [],
    matches: [],
    noEquivalent: [],
    notes: [],
    set: (key, value, from) => x.settings.push({ key, value, from }),
    none: (key, reason) => x.noEquivalent.push({ key, value: val(key), reason }),
    same: (key, reason) => x.matches.push({ key, value: val(key), reason }),
  };
  for (const [key, v] of Object.entries(x.eff)) {
    const own = cfg[key as keyof Export['eff']];
    if (v !== own) x.notes.push(`${key} ${v} is set by the active methods (${cfg.methods.join(', ')}); the config's own ${own} applies when they are off.`);
  }
  if (fw === 'verl') verlOptions(x);
  else trlOptions(x);
  methodOptions(x);
  const fallback = estimatorFallback(x);
  leftoverOptions(x);
  return { framework: fw, settings: x.settings, matches: x.matches, noEquivalent: x.noEquivalent, notes: x.notes, fallback };
}

/** verl's actor, rollout and algorithm options (Hydra overrides). */
function verlOptions(x: Export): void {
  const { cfg, llm, plan, eff, M, Tp, set, none, notes } = x;
  none('seed', "seeds this playground's tasks, initial weights and sampling; verl's randomness comes from data.seed, actor_rollout_ref.rollout.seed and the inference engine, so the numbers will differ anyway");
  const prompts = llm ? LLM_PROMPTS_PER_STEP : cfg.batch;
  set('data.train_batch_size', prompts, ['batch']);
  if (llm) notes.push(`data.train_batch_size=${prompts} prompts per step, as verl's examples use; the playground's ${cfg.batch} suits its toy tasks.`);
  set('actor_rollout_ref.rollout.n', cfg.group, ['group']);
  set('actor_rollout_ref.rollout.temperature', cfg.temperature, ['temperature']);
  verlSampler(x);
  set('actor_rollout_ref.actor.optim.lr', llm ? LLM_LR : cfg.lr, ['lr']);
  if (llm) notes.push(`actor_rollout_ref.actor.optim.lr=${LLM_LR} for an LLM; the playground's ${cfg.lr} is for its tiny MLP and would wreck an LLM.`);
  set('actor_rollout_ref.actor.optim.betas', [cfg.beta1, cfg.beta2], ['beta1', 'beta2']);
  // The playground's optimizer is plain Adam; verl's AdamW defaults to weight_decay=0.01.
  set('actor_rollout_ref.actor.optim.weight_decay', 0, []);
  if (cfg.maxGradNorm > 0) set('actor_rollout_ref.actor.optim.clip_grad', cfg.maxGradNorm, ['maxGradNorm']);
  else none('maxGradNorm', 'verl always clips the gradient norm (optim.clip_grad); 0 (off) has no equivalent, a very large value comes closest');
  set('actor_rollout_ref.actor.ppo_epochs', cfg.epochs, ['epochs']);
  if (prompts % M === 0) {
    set('actor_rollout_ref.actor.ppo_mini_batch_size', prompts / M, ['minibatches']);
  } else {
    set('actor_rollout_ref.actor.ppo_mini_batch_size', prompts, []);
    none('minibatches', `verl splits a batch into minibatches of whole prompt groups (ppo_mini_batch_size counts prompts); ${M} minibatches do not divide ${prompts} prompts evenly, so one minibatch is used`);
  }
  if (plan.ratio.mode === 'sapo') {
    none('clipLow', "SAPO has no clip (a soft gate); the config's clip is unused while it is on");
    none('clipHigh', "SAPO has no clip (a soft gate); the config's clip is unused while it is on");
  } else if (plan.ratio.mode === 'turn') {
    // SeeUPO's clip bounds a per-turn ratio in stages; verl's clip_ratio_* bound token ratios.
    none('clipLow', "the active method's clip bounds a per-turn ratio, which verl's clip_ratio_low does not mean");
    none('clipHigh', "the active method's clip bounds a per-turn ratio, which verl's clip_ratio_high does not mean");
  } else {
    set('actor_rollout_ref.actor.clip_ratio_low', eff.clipLow, ['clipLow']);
    set('actor_rollout_ref.actor.clip_ratio_high', eff.clipHigh, ['clipHigh']);
  }
  if (cfg.dualClip > 1) set('actor_rollout_ref.actor.clip_ratio_c', cfg.dualClip, ['dualClip']);
  else none('dualClip', 'verl requires clip_ratio_c > 1');
  set('actor_rollout_ref.actor.loss_agg_mode', eff.lossAgg, ['lossAgg']);
  if (eff.lossAgg === 'seq-mean-token-sum-norm') {
    set('actor_rollout_ref.actor.loss_scale_factor', Tp, []);
    notes.push(`loss_scale_factor=${Tp} is this task's policy-token budget (turns x action tokens), the constant the playground divides by; use your response length in a real run.`);
  }
  set('algorithm.use_kl_in_reward', false, []);
  set('actor_rollout_ref.actor.use_kl_loss', eff.klCoef > 0, ['klCoef']);
  if (eff.klCoef > 0) {
    set('actor_rollout_ref.actor.kl_loss_coef', eff.klCoef, ['klCoef']);
    // docs/METHODS.md 1.4: k3 is verl's low_var_kl, k1 its kl, k2 its mse.
    set('actor_rollout_ref.actor.kl_loss_type', { k3: 'low_var_kl', k1: 'kl', k2: 'mse' }[cfg.klType], []);
  }
  notes.push('Add your own data.train_files, actor_rollout_ref.model.path, reward function and rollout engine settings (actor_rollout_ref.rollout.name, GPUs).');
}

/**
 * The rollout's sampler (docs/METHODS.md 5.19): verl's rollout.dtype, top_p and top_k. verl's engine
 * runs the whole model in its dtype (bfloat16 by default), where the playground rounds only the
 * logits, and no dtype makes an engine's kernels the trainer's: fp32 here has no verl equivalent.
 */
function verlSampler(x: Export): void {
  const { cfg, set, same, none, notes } = x;
  const r = cfg.rollout;
  if (r.precision === 'fp32') {
    none('rollout.precision', "the playground's fp32 sampler is the trainer itself; verl's rollout engine is never that (its actor_rollout_ref.rollout.dtype is bfloat16 by default, and even in float32 its kernels are not the trainer's)");
  } else {
    set('actor_rollout_ref.rollout.dtype', r.precision === 'bf16' ? 'bfloat16' : 'float16', ['rollout.precision']);
    notes.push(`actor_rollout_ref.rollout.dtype runs the whole rollout model in ${r.precision}; the playground rounds only the logits, so a real run's mismatch is larger.`);
  }
  if (r.topP < 1) set('actor_rollout_ref.rollout.top_p', r.topP, ['rollout.topP']);
  else same('rollout.topP', "verl's top_p is 1 (off) by default, as here");
  if (r.topK > 0) set('actor_rollout_ref.rollout.top_k', r.topK, ['rollout.topK']);
  else same('rollout.topK', "off in both: verl's top_k is -1 by default, the playground's 0");
  if (r.precision !== 'fp32' || r.topP < 1 || r.topK > 0) {
    notes.push("verl measures the sampler's mismatch (its rollout_corr metrics) from the engine's own log-probs: set actor_rollout_ref.rollout.calculate_log_probs=True to get them.");
  }
}

/** TRL's GRPOConfig options. */
function trlOptions(x: Export): void {
  const { cfg, llm, plan, eff, M, Tp, set, none, notes } = x;
  const N = cfg.batch * cfg.group;
  set('seed', cfg.seed, ['seed']);
  notes.push("seed seeds TRL's run, not this playground's tasks and weights: the numbers will differ.");
  set('num_generations', cfg.group, ['group']);
  const gen = (llm ? LLM_PROMPTS_PER_STEP : cfg.batch) * cfg.group;
  if (gen % M === 0) {
    // One process: each generation of prompts x G completions is split into M optimizer steps,
    // each accumulated from per-device micro-batches that fit an LLM in memory.
    const perStep = gen / M;
    const micro = llm ? divisorAtMost(perStep, LLM_PER_DEVICE) : perStep;
    set('per_device_train_batch_size', micro, ['batch', 'minibatches']);
    set('gradient_accumulation_steps', perStep / micro, []);
    set('steps_per_generation', (perStep / micro) * M, ['minibatches']);
    notes.push(
      `One process: each generation holds ${gen} completions (${gen / cfg.group} prompts x ${cfg.group}), ${M} optimizer step(s) of ${perStep}, each ${micro} x ${perStep / micro} accumulated` +
        (llm ? `; the playground trains ${cfg.batch} prompts per step, a toy's batch.` : '.') +
        ' With P GPUs divide gradient_accumulation_steps and steps_per_generation by P.',
    );
  } else {
    set('per_device_train_batch_size', N, ['batch']);
    set('gradient_accumulation_steps', 1, []);
    none('minibatches', `${M} minibatches do not divide the ${N} completions of a batch evenly; TRL needs equal optimizer steps per generation`);
  }
  set('temperature', cfg.temperature, ['temperature']);
  for (const key of ['rollout.precision', 'rollout.topP', 'rollout.topK'] as const) {
    none(key, "no TRL option for the rollout sampler's logit precision or truncation is checked in this repository; TRL's vLLM dtype sets the whole model's precision, not the logits'");
  }
  set('learning_rate', llm ? LLM_LR : cfg.lr, ['lr']);
  if (llm) notes.push(`learning_rate=${LLM_LR} for an LLM; the playground's ${cfg.lr} is for its tiny MLP and would wreck an LLM.`);
  // The playground keeps the learning rate constant; TrainingArguments decays it linearly by default.
  set('lr_scheduler_type', 'constant', []);
  set('adam_beta1', cfg.beta1, ['beta1']);
  set('adam_beta2', cfg.beta2, ['beta2']);
  set('weight_decay', 0, []);
  set('max_grad_norm', cfg.maxGradNorm, ['maxGradNorm']);
  set('num_iterations', cfg.epochs, ['epochs']);
  if (plan.ratio.mode !== 'token' && plan.ratio.mode !== 'sequence') {
    // GMPO's clip is in log space, SeeUPO's and SAMPO's bound per-turn ratios: TRL's epsilon is
    // a token (or sequence) ratio clip, so exporting them under it would say something else.
    none('clipLow', `the active method's clip (${plan.ratio.mode} ratio) is not what TRL's epsilon means`);
    none('clipHigh', `the active method's clip (${plan.ratio.mode} ratio) is not what TRL's epsilon_high means`);
  } else {
    set('epsilon', eff.clipLow, ['clipLow']);
    set('epsilon_high', eff.clipHigh, ['clipHigh']);
  }
  if (cfg.dualClip >= 1 + eff.clipHigh) {
    // TRL's two-sided clipping caps the unclipped ratio at delta: for A < 0 that is the dual-clip
    // bound -A*c, and for A > 0 the min() already picks the 1+epsilon_high term.
    set('delta', cfg.dualClip, ['dualClip']);
  } else {
    none('dualClip', `TRL's delta (two-sided clipping) equals the dual clip only when it is at least 1 + epsilon_high (${1 + eff.clipHigh})`);
  }
  set('beta', eff.klCoef, ['klCoef']);
  switch (eff.lossAgg) {
    case 'token-mean':
      // 'bnpo' normalizes by the local batch's tokens: with one process and no accumulation,
      // exactly the playground's per-minibatch token mean.
      set('loss_type', 'bnpo', ['lossAgg']);
      break;
    case 'seq-mean-token-mean':
      set('loss_type', 'grpo', ['lossAgg']);
      break;
    case 'seq-mean-token-sum-norm':
      set('loss_type', 'dr_grpo', ['lossAgg']);
      set('max_completion_length', Tp, []);
      notes.push(`max_completion_length=${Tp} is this task's policy-token budget (dr_grpo divides by it); use your response length in a real run.`);
      break;
    case 'seq-mean-token-sum':
      none('lossAgg', 'TRL has no loss_type that sums tokens per sequence and averages over sequences (seq-mean-token-sum)');
      break;
  }
}

/** Each active method's own mapping; inactive ones change nothing. */
function methodOptions(x: Export): void {
  const { cfg, fw, none, same } = x;
  for (const id of cfg.methods) {
    const def = methodDef(id);
    const mapping = def.frameworks?.[fw];
    const params = cfg.methodParams[id]!;
    if (!mapping) {
      const why = def.frameworks?.noEquivalent ?? 'no mapping written';
      none('methods', `${def.name} (${id}) has no ${FRAMEWORK_NAMES[fw]} equivalent: ${why}`);
      for (const p of Object.keys(def.params)) none(`${id}.${p}`, `a parameter of ${def.name}`);
      continue;
    }
    const r = mapping(params);
    for (const s of r.set) {
      // An option two methods set (the rollout corrections' shared ones) is written once: the
      // same value carries both methods' keys, a chained one joins the values.
      const prev = x.settings.find((p) => p.key === s.key);
      if (!prev) x.settings.push({ ...s, from: [...s.from] });
      else if (s.chain !== undefined) Object.assign(prev, { value: `${prev.value}${s.chain}${s.value}`, from: [...new Set([...prev.from, ...s.from])] });
      else if (prev.value === s.value) prev.from = [...new Set([...prev.from, ...s.from])];
      else throw new Error(`${FRAMEWORK_NAMES[fw]} export: ${s.key} is set to ${String(prev.value)} and by ${def.name} to ${String(s.value)}`);
    }
    for (const m of r.matches ?? []) same(`${id}.${m.param}`, m.reason);
    for (const u of r.unsupported ?? []) none(`${id}.${u.param}`, u.reason);
  }
  if (!x.noEquivalent.some((n) => n.key === 'methods')) {
    same('methods', `every active method maps onto the ${FRAMEWORK_NAMES[fw]} options above`);
  }
}

/**
 * The estimator: a framework without one for it runs GRPO in its place, said as such. verl must be
 * told: its default adv_estimator is gae (_generated_ppo_trainer.yaml), which turns on a critic that
 * nothing here configures, so verl would refuse to start (workers/config/critic.py:146-147).
 */
function estimatorFallback(x: Export): EstimatorFallback | null {
  const { cfg, fw, plan, settings, set, notes } = x;
  const verl = fw === 'verl';
  let fallback: EstimatorFallback | null = null;
  const estimator = cfg.methods.map((id) => methodDef(id)).find((d) => d.estimator);
  const estimatorMapped = estimator ? Boolean(estimator.frameworks?.[fw]) : false;
  // TRL's GRPOTrainer has one estimator, GRPO's group normalization: a mapped estimator is carried
  // only where the run's advantages are that (not SAMPO's step advantages, not CM2's per-turn ones).
  const carried = verl ? settings.some((s) => s.key === 'algorithm.adv_estimator') : estimatorMapped && plan.advantage.estimator === 'group' && !plan.advantage.otb && !plan.critic;
  if (estimator && !carried) {
    fallback = {
      method: estimator.id,
      name: estimator.name,
      runs: 'GRPO',
      reason: estimatorMapped ? `${FRAMEWORK_NAMES[fw]} has no advantage estimator for its ${estimator.name} advantages (its other settings are mapped)` : (estimator.frameworks?.noEquivalent ?? 'no mapping written'),
    };
    if (verl) set('algorithm.adv_estimator', 'grpo', []);
    notes.push(
      `${estimator.name} (${estimator.id}) has no ${FRAMEWORK_NAMES[fw]} advantage estimator: ${verl ? "algorithm.adv_estimator=grpo runs GRPO's group-normalized advantages in its place (verl's default, gae, needs a critic)" : "GRPOTrainer runs GRPO's group-normalized advantages in its place"}.`,
    );
  }
  if (verl && settings.some((s) => s.key === 'algorithm.adv_estimator' && s.value === 'gae')) {
    notes.push("PPO (gae) trains a critic: set critic.model.path (verl's default names a 7B model) and critic.ppo_micro_batch_size_per_gpu, without which verl refuses to start.");
  }
  return fallback;
}

/**
 * Whatever is left is the playground's own: the task, its knobs, the model, and any field added to
 * CONFIG_FIELDS after this mapping was written.
 */
function leftoverOptions(x: Export): void {
  const { cfg, fw, none } = x;
  const handled = new Set([...x.settings.flatMap((s) => s.from), ...x.matches.map((m) => m.key), ...x.noEquivalent.map((n) => n.key)]);
  for (const key of Object.keys(CONFIG_FIELDS)) {
    if (handled.has(key)) continue;
    if (key === 'task') none(key, `the toy ${cfg.task} task; a real run trains on your dataset with your reward function`);
    else if (key.startsWith('env.')) none(key, TOY_TASK_REASON);
    else if (key.startsWith('model.')) none(key, MODEL_REASON[fw]);
    else none(key, `no ${FRAMEWORK_NAMES[fw]} option is mapped for this setting yet`);
  }
}

/** A value as Hydra override text (verl's command line). */
function hydraValue(v: FrameworkValue): string {
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (Array.isArray(v)) return `'[${v.map(String).join(',')}]'`;
  return String(v);
}

/** A value as a Python literal (TRL). */
function pythonValue(v: FrameworkValue): string {
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(String).join(', ')}]`;
  return String(v);
}

/** The config as verl overrides for `python3 -m verl.trainer.main_ppo`. */
export function exportToVerl(cfg: RunConfig, opts: ExportOptions = {}): FrameworkExport {
  const b = build(cfg, 'verl', opts);
  // Grouped as verl's config is: algorithm, data, rollout, actor (a stable sort keeps the order within).
  const rank = (k: string) => ['algorithm.', 'data.', 'actor_rollout_ref.rollout.', 'actor_rollout_ref.actor.'].findIndex((p) => k.startsWith(p));
  b.settings.sort((x, y) => rank(x.key) - rank(y.key));
  const lines = b.settings.map((s) => `    ${s.key}=${hydraValue(s.value)}`);
  const text = ['python3 -m verl.trainer.main_ppo \\', lines.join(' \\\n')].join('\n');
  return { ...b, text };
}

/** The config as a TRL `GRPOConfig(...)` snippet. */
export function exportToTrl(cfg: RunConfig, opts: ExportOptions = {}): FrameworkExport {
  const b = build(cfg, 'trl', opts);
  const text = [
    'from trl import GRPOConfig',
    '',
    'training_args = GRPOConfig(',
    ...b.settings.map((s) => `    ${s.key}=${pythonValue(s.value)},`),
    ')',
  ].join('\n');
  return { ...b, text };
}

export function exportToFramework(cfg: RunConfig, fw: Framework): FrameworkExport {
  return fw === 'verl' ? exportToVerl(cfg) : exportToTrl(cfg);
}

/** Every playground key an export must account for: config fields, methods, active methods' params. */
export function exportedKeys(cfg: RunConfig): string[] {
  const keys = [...Object.keys(CONFIG_FIELDS), 'methods'];
  for (const id of cfg.methods) for (const p of Object.keys(methodDef(id).params)) keys.push(`${id}.${p}`);
  return keys;
}
