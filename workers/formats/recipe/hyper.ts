/**
 * The recipe's hyperparameters: the method's settings as "Take it to a real run" maps them
 * (workers/formats/frameworkExport.ts), with LLM-sane values where the toy's do not carry over (learning
 * rate, per-device batch, lengths), each such line noting the playground's own value.
 */
import type { RunConfig } from '../../core/config';
import { createEnv } from '../../core/envs';
import { exportToTrl, exportToVerl, LLM_LR, type FrameworkSetting } from '../frameworkExport';
import type { FrameworkValue } from '../../core/methods/registry';

export { LLM_LR } from '../frameworkExport';
/** Tokens an LLM may write per turn: a command is a handful, reasoning before it needs room. */
export const TOKENS_PER_TURN = 256;
export const PROMPT_TOKENS = 512;
export const MICRO_BATCH_PER_GPU = 4;
export const VERL_MODEL = 'Qwen/Qwen2.5-0.5B-Instruct';
export const TRL_MODEL = 'Qwen/Qwen3-0.6B';

export interface RecipeSetting {
  key: string;
  value: FrameworkValue;
  /** Why it has this value where it is not the playground's (the playground's value in words). */
  note?: string;
}

export interface RecipePlan {
  /** Prompts per training step (the playground's batch). */
  batch: number;
  /** Training steps that the episodes fill (the last one may hold fewer prompts). */
  steps: number;
  maxTurns: number;
  /** Policy tokens per trajectory in the toy (turns x action tokens). */
  toyTokens: number;
}

export function recipePlan(cfg: RunConfig, episodes: number): RecipePlan {
  const l = createEnv(cfg).layout;
  return { batch: cfg.batch, steps: Math.ceil(episodes / cfg.batch), maxTurns: l.maxTurns, toyTokens: l.maxTurns * l.actionLen };
}

function withOverrides(base: FrameworkSetting[], over: Record<string, { value: FrameworkValue; note: string }>): RecipeSetting[] {
  const out: RecipeSetting[] = base.map((s) => (s.key in over ? { key: s.key, ...over[s.key]! } : { key: s.key, value: s.value }));
  for (const [key, o] of Object.entries(over)) if (!base.some((s) => s.key === key)) out.push({ key, ...o });
  return out;
}

/** verl overrides for `python3 -m verl.trainer.main_ppo`, with the recipe's data, interaction and reward. */
export function verlSettings(cfg: RunConfig, plan: RecipePlan): RecipeSetting[] {
  const responseLen = Math.max(512, TOKENS_PER_TURN * plan.maxTurns);
  const exported = exportToVerl(cfg, { scale: 'toy' });
  const adv = exported.settings.find((s) => s.key === 'algorithm.adv_estimator')?.value;
  const fallback = exported.fallback;
  // verl's critic defaults name a 7B model and no micro-batch, so PPO would not start
  // (_generated_ppo_trainer.yaml critic.model.path; workers/config/critic.py:146-147).
  const critic: Record<string, { value: FrameworkValue; note: string }> =
    adv === 'gae'
      ? {
          'critic.model.path': { value: VERL_MODEL, note: "PPO's critic: the actor's small model (verl's default path names a 7B model)" },
          'critic.ppo_micro_batch_size_per_gpu': { value: MICRO_BATCH_PER_GPU, note: 'memory only; verl refuses to start without it' },
        }
      : {};
  return withOverrides(exported.settings, {
    ...(fallback
      ? { 'algorithm.adv_estimator': { value: 'grpo', note: `playground: ${fallback.name} (${fallback.method}), which verl has no estimator for; GRPO runs in its place (see the header)` } }
      : {}),
    ...critic,
    'actor_rollout_ref.actor.optim.lr': { value: LLM_LR, note: `playground: ${cfg.lr} for a tiny MLP; an LLM diverges at that rate` },
    ...(exported.settings.some((s) => s.key === 'actor_rollout_ref.actor.loss_scale_factor')
      ? { 'actor_rollout_ref.actor.loss_scale_factor': { value: responseLen, note: `playground: ${plan.toyTokens} policy tokens; the response budget here` } }
      : {}),
    'data.max_prompt_length': { value: PROMPT_TOKENS, note: 'playground: a few toy tokens; the system prompt with the rules needs room' },
    'data.max_response_length': { value: responseLen, note: `playground: ${plan.toyTokens} policy tokens over ${plan.maxTurns} turns; ${TOKENS_PER_TURN} per turn here, observations included` },
    'data.shuffle': { value: false, note: "keeps the playground's batch order: step i trains on iteration i's prompts (the search noise curriculum's clock)" },
    'data.return_raw_chat': { value: true, note: 'the agent loop needs the chat messages' },
    'actor_rollout_ref.model.path': { value: VERL_MODEL, note: 'playground: a tiny MLP policy; any instruct model works' },
    'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu': { value: MICRO_BATCH_PER_GPU, note: 'memory only; does not change the update' },
    'actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu': { value: MICRO_BATCH_PER_GPU, note: 'memory only' },
    'actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu': { value: MICRO_BATCH_PER_GPU, note: 'memory only' },
    'actor_rollout_ref.rollout.name': { value: 'sglang', note: 'or vllm' },
    'actor_rollout_ref.rollout.tensor_model_parallel_size': { value: 1, note: 'a small model fits one GPU' },
    'actor_rollout_ref.rollout.gpu_memory_utilization': { value: 0.5, note: 'leaves room for the actor on the same GPU' },
    'actor_rollout_ref.rollout.multi_turn.enable': { value: true, note: 'one assistant message per toy turn' },
    'actor_rollout_ref.rollout.multi_turn.max_assistant_turns': {
      value: plan.maxTurns + 1,
      note: `playground: ${plan.maxTurns} turns. One more here: verl's tool agent loop counts a message and stops at this many before the interaction sees it (tool_agent_loop.py:243, 256-257), and the environment ends every episode by its turn ${plan.maxTurns}`,
    },
    'actor_rollout_ref.rollout.multi_turn.interaction_config_path': { value: '$HERE/interaction_config.yaml', note: 'the toy environment (toy_interaction.py)' },
    'actor_rollout_ref.rollout.agent.default_agent_loop': { value: 'tool_agent', note: 'the agent loop that drives interactions' },
    'custom_reward_function.path': { value: '$HERE/reward.py', note: 'reads the interaction\'s last turn score' },
    'custom_reward_function.name': { value: 'compute_score', note: "verl's default name" },
    'data.train_files': { value: '$ROOT/data/train.parquet', note: 'written by prepare_data.py' },
    'data.val_files': { value: '$ROOT/data/val.parquet', note: 'held-out prompts (prepare_data.py)' },
    'trainer.total_epochs': { value: 1, note: 'one pass: the episodes are the playground\'s iterations in order' },
    'trainer.total_training_steps': { value: plan.steps, note: `${plan.steps} steps of ${plan.batch} prompts (the episodes written)` },
    'trainer.n_gpus_per_node': { value: '${GPUS:-1}', note: 'GPUS=8 bash run.sh for a full node' },
    'trainer.nnodes': { value: '${NNODES:-1}', note: 'one node is plenty for this model size; NNODES=2 on a Ray cluster of two (README)' },
    'trainer.test_freq': { value: 10, note: 'validation every 10 steps' },
    'trainer.save_freq': { value: -1, note: 'no checkpoints' },
    'trainer.logger': { value: '[console]', note: 'add wandb if you use it' },
    'trainer.project_name': { value: 'toyenv', note: '' },
    'trainer.experiment_name': { value: `${cfg.task}-seed${cfg.seed}`, note: '' },
  });
}

/** The largest divisor of n that is at most cap. */
function divisorAtMost(n: number, cap: number): number {
  for (let d = Math.min(n, cap); d > 1; d--) if (n % d === 0) return d;
  return 1;
}

/** GRPOConfig(...) arguments. */
export function trlSettings(cfg: RunConfig, plan: RecipePlan): RecipeSetting[] {
  const base = exportToTrl(cfg, { scale: 'toy' }).settings;
  const get = (k: string) => base.find((s) => s.key === k)?.value;
  const perStep = Number(get('per_device_train_batch_size'));
  const stepsPerGen = Number(get('steps_per_generation') ?? 1);
  const completionLen = Math.max(512, TOKENS_PER_TURN * plan.maxTurns);
  const over: Record<string, { value: FrameworkValue; note: string }> = {
    learning_rate: { value: LLM_LR, note: `playground: ${cfg.lr} for a tiny MLP; an LLM diverges at that rate` },
    max_completion_length: { value: completionLen, note: `playground: ${plan.toyTokens} policy tokens; ${TOKENS_PER_TURN} per turn here, tool results included` },
    max_tool_calling_iterations: { value: plan.maxTurns, note: `playground: ${plan.maxTurns} turns (each round runs the tool calls of the message before it, grpo_trainer.py:1945)` },
    shuffle_dataset: { value: false, note: "keeps the playground's batch order (the search noise curriculum's clock)" },
    num_train_epochs: { value: 1, note: `one pass: ${plan.steps} generations of ${plan.batch} prompts` },
    bf16: { value: true, note: 'LLM training precision' },
    logging_steps: { value: 1, note: '' },
  };
  const micro = divisorAtMost(perStep, 2 * MICRO_BATCH_PER_GPU);
  if (micro < perStep) {
    const accum = perStep / micro;
    over.per_device_train_batch_size = { value: micro, note: `playground: ${perStep} completions per optimizer step; kept as ${micro} x ${accum} accumulation steps` };
    over.gradient_accumulation_steps = { value: accum, note: 'memory only; the optimizer step holds the same completions' };
    over.steps_per_generation = { value: stepsPerGen * accum, note: `one generation holds the playground's ${cfg.batch * cfg.group} completions` };
  }
  return withOverrides(base, over);
}
