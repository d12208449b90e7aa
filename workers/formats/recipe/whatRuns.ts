/**
 * What a recipe's script really runs, in words for its header and the README: the framework's
 * algorithm as the exported options make it, the estimator run in place of one the framework lacks,
 * the methods the recipe's environment carries, and the methods and settings that do not carry over.
 * No script says "GRPO" where something else runs, or runs GRPO where the playground ran another
 * method without saying so.
 */
import type { RunConfig } from '../../core/config';
import { methodDef } from '../../core/methods';
import type { ParamValues } from '../../core/methods/params';
import { resolvePlan } from '../../core/plan';
import { FRAMEWORK_NAMES, type FrameworkExport } from '../frameworkExport';

/** verl's advantage estimators by option value (verl/trainer/ppo/core_algos.py:97-109). */
const VERL_ESTIMATORS: Record<string, string> = {
  gae: 'PPO (GAE advantages from a critic)',
  grpo: 'GRPO',
  reinforce_plus_plus: 'REINFORCE++',
  reinforce_plus_plus_baseline: 'REINFORCE++ with a group-mean baseline',
  remax: 'ReMax',
  rloo: 'RLOO',
  optimal_token_baseline: 'the optimal token baseline (OTB)',
};

/** verl's policy losses by loss_mode (core_algos.py: register_policy_loss). */
const VERL_LOSSES: Record<string, string> = {
  vanilla: "PPO's clipped surrogate",
  gspo: "GSPO's sequence-level ratio",
  sapo: "SAPO's soft gate",
  geo_mean: "GMPO's geometric-mean ratio",
  cispo: "CISPO's clipped importance weights",
};

const value = (exp: FrameworkExport, key: string) => exp.settings.find((s) => s.key === key)?.value;

function algorithm(exp: FrameworkExport): string {
  if (exp.framework === 'verl') {
    const adv = String(value(exp, 'algorithm.adv_estimator') ?? 'gae');
    const parts = [`${VERL_ESTIMATORS[adv] ?? adv} (algorithm.adv_estimator=${adv})`];
    if (adv === 'grpo' && value(exp, 'algorithm.norm_adv_by_std_in_grpo') === false) parts.push('without the division by the group std');
    const loss = value(exp, 'actor_rollout_ref.actor.policy_loss.loss_mode');
    parts.push(`with ${loss === undefined ? VERL_LOSSES.vanilla : `${VERL_LOSSES[String(loss)] ?? String(loss)} (policy_loss.loss_mode=${String(loss)})`}`);
    if (value(exp, 'algorithm.use_pf_ppo') === true) parts.push("with PF-PPO's reward-reliability resampling");
    return `verl's ${parts.join(', ')}`;
  }
  const parts = ['GRPO'];
  const scale = value(exp, 'scale_rewards');
  if (scale === 'none') parts.push('without the division by the group std (scale_rewards="none")');
  if (value(exp, 'importance_sampling_level') === 'sequence') parts.push('with a sequence-level importance ratio (importance_sampling_level="sequence")');
  const loss = value(exp, 'loss_type');
  if (loss !== undefined) parts.push(`loss_type="${String(loss)}"`);
  return `TRL's GRPOTrainer: ${parts.join(', ')}`;
}

/**
 * The active methods whose plan hook sets task knobs, with the knobs they set: the recipe's
 * environment carries them (config.json, toyenv), whatever the framework has.
 */
export function environmentMethods(cfg: RunConfig): Array<{ id: string; name: string; knobs: string[] }> {
  const out: Array<{ id: string; name: string; knobs: string[] }> = [];
  for (const id of cfg.methods) {
    const def = methodDef(id);
    if (!def.plan) continue;
    const plan = resolvePlan(cfg);
    plan.envConfig = cfg;
    def.plan(plan, cfg.methodParams[id] as ParamValues<typeof def.params>, cfg);
    const env = plan.envConfig.env as Record<string, unknown>;
    const own = cfg.env as Record<string, unknown>;
    const knobs = Object.keys(env).filter((k) => env[k] !== own[k]).map((k) => `env.${k}=${String(env[k])}`);
    if (knobs.length > 0) out.push({ id, name: def.name, knobs });
  }
  return out;
}

/** The header lines (without comment marks) of a script that runs `exp`, the export of `cfg`. */
export function whatRuns(cfg: RunConfig, exp: FrameworkExport): string[] {
  const fw = FRAMEWORK_NAMES[exp.framework];
  const lines = [`What runs: ${algorithm(exp)}.`];
  if (exp.fallback) {
    lines.push(`In place of the playground's ${exp.fallback.name} (${exp.fallback.method}): ${exp.fallback.reason}. ${fw} runs GRPO's group-normalized advantages instead.`);
  }
  const env = environmentMethods(cfg);
  for (const m of env) lines.push(`Carried by the environment (config.json): ${m.name} (${m.id}) sets ${m.knobs.join(', ')}.`);
  // Said above already: the estimator run in place of another, and what the environment carries.
  const said = new Set([...env.map((m) => m.id), ...(exp.fallback ? [exp.fallback.method] : [])]);
  for (const id of cfg.methods) {
    const def = methodDef(id);
    if (!def.frameworks?.[exp.framework]) {
      if (!said.has(id)) lines.push(`Not carried over: ${def.name} (${id}): ${def.frameworks?.noEquivalent ?? 'no mapping written'}.`);
      continue;
    }
    const params = exp.noEquivalent.filter((n) => n.key.startsWith(`${id}.`));
    if (params.length > 0) lines.push(`Not carried over: ${params.map((n) => `${n.key}=${n.value} (${n.reason})`).join('; ')}.`);
  }
  return lines;
}
