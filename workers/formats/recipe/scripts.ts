/** The recipe's run scripts: verl's command line (run.sh) and the TRL script's GRPOConfig. */
import type { FrameworkValue } from '../../core/methods/registry';
import { TRL_MODEL, type RecipeSetting } from './hyper';

function hydraValue(v: FrameworkValue): string {
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (Array.isArray(v)) return `[${v.map(String).join(',')}]`;
  return String(v);
}

function pythonValue(v: FrameworkValue): string {
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(String).join(', ')}]`;
  return String(v);
}

/** verl_run/run.sh: what runs, then every override on its own line, with the playground's value beside the ones that differ. */
export function verlRunScript(settings: RecipeSetting[], task: string, runs: string[]): string {
  const lines = settings.flatMap((s) => [...(s.note ? [`  # ${s.note}`] : []), `  "${s.key}=${hydraValue(s.value)}"`]);
  return [
    '#!/usr/bin/env bash',
    `# verl on the toy ${task} task: bash verl_run/run.sh [more overrides]  (GPUS=8 for a full node)`,
    ...runs.map((l) => `# ${l}`),
    'set -euo pipefail',
    'HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"',
    'ROOT="$(dirname "$HERE")"',
    '# toy_interaction.py is found on PYTHONPATH (interaction_config.yaml names its class); toyenv under ROOT.',
    'export PYTHONPATH="$HERE:$ROOT:${PYTHONPATH:-}"',
    '[ -f "$ROOT/data/train.parquet" ] || python3 "$HERE/prepare_data.py"',
    'ARGS=(',
    ...lines,
    ')',
    'python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"',
    '',
  ].join('\n');
}

/** The head of trl_run/train_grpo.py: what runs, as comment lines. */
export function trlRunsBlock(task: string, runs: string[]): string {
  return [`# TRL on the toy ${task} task: python3 trl_run/train_grpo.py  (accelerate launch for several GPUs: see the README)`, ...runs.map((l) => `# ${l}`)].join('\n');
}

/** The generated tail of trl_run/train_grpo.py: the default model and GRPOConfig. */
export function trlConfigBlock(settings: RecipeSetting[]): string {
  const lines = settings.map((s) => `        ${s.key}=${pythonValue(s.value)},${s.note ? `  # ${s.note}` : ''}`);
  return [
    `DEFAULT_MODEL = ${JSON.stringify(TRL_MODEL)}`,
    '',
    '',
    'def grpo_config(output_dir):',
    '    return GRPOConfig(',
    '        output_dir=output_dir,',
    ...lines,
    '        chat_template_kwargs={"enable_thinking": False},  # one command per turn, no thinking block',
    '    )',
  ].join('\n');
}
