/** The recipe's README: what a run needs, how to start it, and how the toy's numbers map. */
import { getField, type RunConfig } from '../../core/config';
import { TASK_KNOBS } from '../../core/envs';
import type { FrameworkExport } from '../frameworkExport';
import { TRL_MODEL, VERL_MODEL, type RecipePlan, type RecipeSetting } from './hyper';

/** The framework sources whose interfaces the adapters follow (read at these commits). */
export const UPSTREAM = {
  verl: { repo: 'volcengine/verl', commit: 'b178a3cd56f58b2d502255daba591e92833930a7' },
  trl: { repo: 'huggingface/trl', commit: 'f2cd57710ae345ea6428ae95363267fcf38a3dc8' },
} as const;

const TASK_TEXT: Record<RunConfig['task'], string> = {
  search: 'multi-hop search over a per-episode knowledge base, with a simulated engine that returns a plausible wrong document with probability p (fixed, or ZeroSearch\'s exponential curriculum over training steps)',
  tools: 'multi-step tool use (RATE, CONV, BOOK, CONFIRM on per-episode tables) judged turn by turn by CM2 checklists, with a simulated judge that flips labels',
  roles: 'a planner and an executor in one episode (Dr. MAS): the planner delegates a lookup, the executor looks it up, the planner answers; each role has its own reward',
  sequence: 'hidden-sequence matching: one turn, the policy writes the target sequence of a task id (the collapse dial)',
};

export interface ReadmeParts {
  episodes: number;
  verl: RecipeSetting[];
  trl: RecipeSetting[];
  verlExport: FrameworkExport;
  trlExport: FrameworkExport;
  /** What each script runs (workers/formats/recipe/whatRuns.ts), as its header says it. */
  runs: { verl: string[]; trl: string[] };
}

/** verl's release that the pinned commit carries (verl/version/version) and its rollout engines (setup.py). */
const VERL_VERSION = '0.8.0.dev';
const TRL_VERSION = '1.10.0.dev0';

/** The TRL script's batch on one process, in words. */
function trlBatch(trl: RecipeSetting[], cfg: RunConfig): string {
  const get = (k: string, d: number) => Number(trl.find((s) => s.key === k)?.value ?? d);
  const per = get('per_device_train_batch_size', 8);
  const accum = get('gradient_accumulation_steps', 1);
  const spg = get('steps_per_generation', accum);
  return `${per} x ${accum} = ${per * accum} completions per optimizer step, ${per * spg} per generation: ${cfg.batch} prompts x ${cfg.group}`;
}

const show = (v: unknown) => (Array.isArray(v) ? `[${v.join(', ')}]` : String(v));

export function recipeReadme(cfg: RunConfig, plan: RecipePlan, p: ReadmeParts): string {
  const src = (fw: 'verl' | 'trl', path: string) => `${UPSTREAM[fw].repo} @ ${UPSTREAM[fw].commit.slice(0, 10)}, \`${path}\``;
  const knobs = TASK_KNOBS[cfg.task].map((k) => `${k.slice('env.'.length)}=${String(getField(cfg, k))}`).join(', ');
  return `# Recipe: the toy ${cfg.task} task on verl and TRL

The playground's experiment (task **${cfg.task}**, seed ${cfg.seed}, ${cfg.batch} prompts x ${cfg.group} rollouts per step,
methods ${cfg.methods.join(', ')}) as a run on a real LLM. The task: ${TASK_TEXT[cfg.task]}.
Task knobs: ${knobs}.

## What runs

verl (\`verl_run/run.sh\`):
${p.runs.verl.map((l) => `- ${l}`).join('\n')}

TRL (\`trl_run/train_grpo.py\`):
${p.runs.trl.map((l) => `- ${l}`).join('\n')}

## What a run needs

- GPUs: one 24 GB+ GPU runs either script with the default small models (verl: \`${VERL_MODEL}\`, actor and
  rollout engine sharing the GPU; TRL: \`${TRL_MODEL}\`). \`GPUS=8 bash verl_run/run.sh\` uses a full node. Any
  instruct model works (\`actor_rollout_ref.model.path=...\`, \`--model ...\`); bigger ones need more memory.
- verl ${VERL_VERSION} from source at ${UPSTREAM.verl.repo} ${UPSTREAM.verl.commit} (the commit whose interfaces
  the adapters follow), with sglang or vllm, plus pandas and pyarrow (verl's own dependencies) for the Parquet step.
- TRL ${TRL_VERSION} at ${UPSTREAM.trl.repo} ${UPSTREAM.trl.commit} (\`environment_factory\`), transformers >= 5.2.0,
  datasets and jmespath.
- \`toyenv/\`, \`make_data.py\` and \`python3 -m toyenv.parity\` need only Python 3.9+ (standard library).

## Install (pinned)

verl and TRL pin different library versions (verl's setup.py keeps numpy < 2 and an old \`trl<=0.9.6\` extra),
so give each its own virtual environment.

verl, from source at the pinned commit:

    git clone https://github.com/volcengine/verl.git
    cd verl && git checkout ${UPSTREAM.verl.commit}
    pip install -e ".[sglang]"    # sglang 0.5.6 with torch 2.9.1 (setup.py); or ".[vllm]" (vllm 0.8.5-0.12.0)
                                  # and actor_rollout_ref.rollout.name=vllm

TRL at the pinned commit, with what its environment loop needs:

    pip install "trl @ git+https://github.com/huggingface/trl.git@${UPSTREAM.trl.commit}" \\
        "transformers>=5.2.0" datasets jmespath

\`jmespath\` is not among TRL's dependencies, but GRPOTrainer refuses tools without it
(${src('trl', 'trl/trainer/grpo_trainer.py')}:600-604), and \`environment_factory\` needs transformers 5.2.0 or later (:592-597).

## Files

- \`config.json\`: the task, seed, batch, group and task knobs; \`data/train.jsonl\`: the episodes.
- \`toyenv/\`: the task in Python, standard library only (\`rng.py\` is the playground's seeded RNG, bit for bit).
- \`verl_run/\`: \`run.sh\`, \`toy_interaction.py\` (the environment as a verl interaction), \`reward.py\`
  (\`compute_score\`), \`prepare_data.py\` (JSONL to Parquet), \`interaction_config.yaml\`.
- \`trl_run/train_grpo.py\`: GRPOTrainer with the environment and its reward; \`make_data.py\`: more episodes.

## Run it

    bash verl_run/run.sh                 # verl: writes data/*.parquet on first use, then trains
    python3 trl_run/train_grpo.py        # TRL, one GPU
    python3 make_data.py --episodes 64000  # more (or fewer) episodes, the same rows the page wrote

verl on a Ray cluster of several nodes: put this folder at the same path on every node and start Ray with the
folder on PYTHONPATH. \`run.sh\` exports PYTHONPATH for the process it starts, but Ray's workers on the other
nodes are started by their node's raylet and inherit its environment, not the driver's; the agent loop imports
\`toy_interaction\` by name there (\`interaction_config.yaml\`'s class_name,
${src('verl', 'verl/interactions/utils/interaction_registry.py')}:27-34) and \`reward.py\` imports \`toyenv\`:

    # every node (the recipe at /mnt/recipe):
    export PYTHONPATH=/mnt/recipe/verl_run:/mnt/recipe:$PYTHONPATH
    ray start --head --port=6379            # the head node
    ray start --address=HEAD_IP:6379        # each other node
    # then, on the head node:
    NNODES=2 GPUS=8 bash verl_run/run.sh

TRL on several GPUs: \`accelerate launch --num_processes P trl_run/train_grpo.py\`. One generation then holds
per_device_train_batch_size x P x steps_per_generation completions and one optimizer step
per_device_train_batch_size x P x gradient_accumulation_steps (${src('trl', 'trl/trainer/grpo_config.py')}:1075-1091):
the script's values are the playground's batch on one process (${trlBatch(p.trl, cfg)}), so with P processes
every step trains on P times the playground's completions. To keep the playground's batch, divide
\`gradient_accumulation_steps\` and \`steps_per_generation\` by P where P divides them (the script prints what a
step holds when it starts).

\`data/train.jsonl\` holds ${p.episodes} episodes: ${plan.steps} training steps of ${plan.batch} prompts, the prompts the
playground's iterations 1..${plan.steps} draw with this seed (row \`iteration\`, \`index\`). Each row has the question
(\`question\`, the user message's words), the per-episode tables the environment answers from (\`tables\`: knowledge
base and links, tool tables and checklists, or the hidden target), the reference answer (\`answer\`), and the
seeds of the batch's noise streams (\`keys\`). Parquet (verl) is written by \`verl_run/prepare_data.py\` on the
cluster (pandas and pyarrow, which verl brings anyway): verl's rows nest a chat prompt (a list of role/content
structs) and dicts, and the chat prompt is built by the same Python that runs the environment.

${frameworkInterfaces(src)}

${howTheToyMaps(plan, p, src)}`;
}

/** The frameworks' interfaces the scripts implement, with where in each source they were read. */
function frameworkInterfaces(src: (fw: 'verl' | 'trl', path: string) => string): string {
  return `## The interfaces, from the frameworks' sources

- verl interaction: \`verl_run/toy_interaction.py\` subclasses \`BaseInteraction\`
  (${src('verl', 'verl/interactions/base.py')}): \`start_interaction(instance_id, **interaction_kwargs)\`,
  \`generate_response(instance_id, messages, **kwargs) -> (should_terminate, response, score, extra)\`. The
  tool agent loop calls them (${src('verl', 'verl/experimental/agent_loop/tool_agent_loop.py')}) and keeps each
  turn's score in \`turn_scores\`; \`interaction_kwargs\` comes from the row's \`extra_info\`, as in
  ${src('verl', 'examples/data_preprocess/gsm8k_multiturn_w_interaction.py')}.
- Why an interaction and not a verl tool: \`BaseTool\` (${src('verl', 'verl/tools/base_tool.py')}: \`create\`,
  \`execute(instance_id, parameters) -> (ToolResponse, reward, metrics)\`, \`calc_reward\`, \`release\`) is called
  only when the model emits a function call, while every toy turn is an action the environment must see, the final
  answer and the planner's and executor's turns included. The interaction is called after every assistant message.
- verl reward: \`verl_run/reward.py::compute_score(data_source, solution_str, ground_truth, extra_info)\`, the
  call in ${src('verl', 'verl/workers/reward_manager/naive.py')}; the reward loop
  (${src('verl', 'verl/experimental/reward_loop/reward_manager/naive.py')}) merges the agent loop's extra fields,
  \`turn_scores\` among them, into \`extra_info\`. Config: \`custom_reward_function.path\` and \`.name\`
  (${src('verl', 'verl/trainer/config/ppo_trainer.yaml')}).
- TRL: \`GRPOTrainer(environment_factory=ToyEnv, reward_funcs=[toy_reward])\`. One \`ToyEnv\` per rollout,
  \`reset(**row)\` with the dataset row's columns, its public method \`act(command)\` exposed as the tool
  (${src('trl', 'docs/source/grpo_trainer.md')}, "Environments"); reward functions are called as
  \`reward_func(prompts=, completions=, completion_ids=, **columns, trainer_state=, log_extra=, log_metric=,
  environments=)\` (${src('trl', 'trl/trainer/grpo_trainer.py')}, \`_calculate_rewards\`).`;
}

/** How the toy's tokens, turns, rewards and settings carry over, and what has no equivalent. */
function howTheToyMaps(plan: RecipePlan, p: ReadmeParts, src: (fw: 'verl' | 'trl', path: string) => string): string {
  const changed = (list: RecipeSetting[]) => list.filter((s) => s.note && s.note.startsWith('playground:')).map((s) => `| \`${s.key}\` | ${show(s.value)} | ${s.note!.slice('playground: '.length)} |`);
  return `## How the toy maps

- Tokens become words: an action is one line of the toy's tokens (\`SEARCH e1 a0\`, \`ANSWER v3\`, \`CONV n2 x1\`,
  \`TELL e0 a1\`, \`s0 s3 s1\`); the environment answers with its observation tokens (\`RES v5\`, \`= m2\`,
  \`@P v3\`, \`✓\`). The system prompt states the rules. A word outside the vocabulary, or more words than an
  action holds, is a malformed action, which the toy treats as it treats one outside its grammar.
- One assistant message (verl) or one \`act\` call (TRL) is one toy turn, and the environment ends every
  episode by its turn ${plan.maxTurns}. verl's \`max_assistant_turns\` is ${plan.maxTurns + 1}: its tool agent loop counts
  a message and stops at the limit before the interaction sees it (${src('verl', 'verl/experimental/agent_loop/tool_agent_loop.py')}:243, 256-257),
  so a limit of ${plan.maxTurns} would cut every episode's last turn. TRL's \`max_tool_calling_iterations\` is ${plan.maxTurns}: each
  round runs the tool calls of the message before it (${src('trl', 'trl/trainer/grpo_trainer.py')}:1945).
- verl never tells the interaction that it cut a rollout off (the response budget): where one interaction serves
  many rollouts it keeps at most \`max_live_episodes\` episodes (\`interaction_config.yaml\`'s config; by default
  4 x batch x group, at least 4096) and drops the least recently used.
- Rewards are the toy's, to the bit: the same draws, observations and rewards as the playground for the same
  row, rollout key and actions (\`python3 -m toyenv.parity\` replays a transcript; the playground's test suite
  runs it on 1,000 episodes of each task). The rollout key is the playground's trajectory index; in a real run
  it is a hash of the framework's rollout id, so each rollout draws its own search noise, judge flips and
  reward-model noise.
- A rollout that stops early (no answer, the response budget spent) ends as the toy ends an unanswered
  episode: search gives -formatPenalty, tools the checklist turns it took, roles a wrong answer, sequence 0.
- The search noise curriculum's clock is the training step: row \`iteration\` i is trained at step i because
  the data is not shuffled (\`data.shuffle=False\`, \`shuffle_dataset=False\`) and a step holds ${plan.batch} prompts.
- Settings the method maps ("Take it to a real run") carry over; where the toy's value does not suit an LLM,
  the recipe sets its own and the scripts say the playground's value beside it:

| verl option | here | playground |
|---|---|---|
${changed(p.verl).join('\n')}

| GRPOConfig argument | here | playground |
|---|---|---|
${changed(p.trl).join('\n')}

- No equivalent in verl: ${p.verlExport.noEquivalent.filter((n) => !n.key.startsWith('env.') && !n.key.startsWith('model.') && n.key !== 'task').map((n) => `\`${n.key}\` (${n.reason})`).join('; ') || 'none'}.
- No equivalent in TRL: ${p.trlExport.noEquivalent.filter((n) => !n.key.startsWith('env.') && !n.key.startsWith('model.') && n.key !== 'task').map((n) => `\`${n.key}\` (${n.reason})`).join('; ') || 'none'}.
- The task knobs (env.*) live in \`config.json\` and the environment; the playground's tiny MLP (model.*) is
  replaced by the LLM.
`;
}
