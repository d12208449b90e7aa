"""Stand-ins of the two frameworks' rollout loops, driving a recipe's shipped adapters with scripted replies.

    python3 recipeLoops.py RECIPE_DIR CASE.json

CASE: {"replies": {row_id: [reply text per assistant turn]}, "rows": N, "batch": B}. The first N rows of
RECIPE_DIR/data/train.jsonl are rolled out once each through

- verl: the tool agent loop's turn accounting and reward plumbing (volcengine/verl @ b178a3cd5), with the
  recipe's interaction (verl_run/interaction_config.yaml -> toy_interaction.py), its data row
  (verl_run/prepare_data.py verl_row) and its reward function (verl_run/reward.py compute_score), under the
  limits verl_run/run.sh sets;
- TRL: GRPOTrainer's environment pool, tool-calling loop and reward call (huggingface/trl @ f2cd577), with
  the recipe's ToyEnv and toy_reward (trl_run/train_grpo.py) under the GRPOConfig that script builds.

The "model" is the script: at its k-th turn a rollout writes replies[row_id][k] (verl: as the assistant
message, after a line of reasoning; TRL: as the argument of one `act` tool call), and once its replies run
out it writes a message with no command (verl) or no tool call (TRL). Tokens are counted as words: the
recipe's budgets are hundreds of tokens per turn, so only the turn counts decide these rollouts.

Prints {"verl": {row_id: {...}}, "trl": {row_id: {...}}} with each rollout's reward and turn counts.
verl and TRL are not imported: the modules the adapters import are replaced by the smallest classes with
the same names (verl.interactions.base.BaseInteraction as at b178a3cd5 verl/interactions/base.py:20-23;
trl.GRPOConfig / GRPOTrainer and datasets.Dataset as plain holders).
"""
import asyncio
import importlib
import json
import os
import re
import sys
import types
import uuid


def install_shims():
    """The import names the adapters use, as the smallest classes that behave as they are used there."""
    verl = types.ModuleType("verl")
    interactions = types.ModuleType("verl.interactions")
    base = types.ModuleType("verl.interactions.base")

    class BaseInteraction:
        # verl/interactions/base.py:21-23
        def __init__(self, config):
            self.config = config
            self.name = config.get("name", "interaction_agent")

    base.BaseInteraction = BaseInteraction
    sys.modules.update({"verl": verl, "verl.interactions": interactions, "verl.interactions.base": base})

    datasets = types.ModuleType("datasets")

    class Dataset:
        @staticmethod
        def from_list(rows):
            return list(rows)

    datasets.Dataset = Dataset
    trl = types.ModuleType("trl")

    class GRPOConfig:
        def __init__(self, **kwargs):
            self.__dict__.update(kwargs)

    class GRPOTrainer:
        pass

    trl.GRPOConfig = GRPOConfig
    trl.GRPOTrainer = GRPOTrainer
    sys.modules.update({"datasets": datasets, "trl": trl})


def run_sh_overrides(path):
    """The Hydra overrides run.sh passes to verl.trainer.main_ppo ("key=value" lines of its ARGS array)."""
    with open(path, encoding="utf-8") as f:
        return dict(m.groups() for m in re.finditer(r'^\s*"([\w.]+)=([^"]*)"\s*$', f.read(), re.M))


def hydra_int(value):
    """An integer override; verl's null (no limit) as None."""
    return None if value in ("null", "None", "") else int(value)


def interaction_class(path):
    """interaction_config.yaml's entry (name, class_name), as verl/interactions/utils/interaction_registry.py:54-81 reads it."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    name = re.search(r'name:\s*"([^"]+)"', text).group(1)
    module_name, class_name = re.search(r'class_name:\s*"([^"]+)"', text).group(1).rsplit(".", 1)
    cls = getattr(importlib.import_module(module_name), class_name)
    return name, cls


def words(text):
    return len(str(text).split())


class ScriptedModel:
    """The rollout's next reply: replies[k] at its k-th turn, then a message with no command."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.k = 0

    def next(self):
        reply = self.replies[self.k] if self.k < len(self.replies) else None
        self.k += 1
        return reply


async def verl_rollout(interaction_map, kwargs, model, limits):
    """One rollout of verl's ToolAgentLoop with an interaction and no tools.

    ToolAgentLoop.run (verl/experimental/agent_loop/tool_agent_loop.py:133-209): request_id = uuid4().hex
    (143), start_interaction(request_id, **interaction_kwargs) with extra_info["interaction_kwargs"]
    (149-160), then the state machine (173-186). _handle_generating_state (222-278) counts the assistant
    turn (243) and ends the rollout on the response budget (254-255), max_assistant_turns (256-257) or
    max_user_turns (258-259) BEFORE the interaction sees the message; otherwise the decoded message is
    appended (265-270) and the interaction runs (275-276). _handle_interacting_state (379-414) calls
    generate_response(request_id, messages, **interaction_kwargs) (381-388), counts the user turn (389),
    appends the reply as a user message (391-392), keeps the score in turn_scores (394-395), and ends the
    rollout when told to (411-412). num_turns = user + assistant + 1 (204); extra_fields carry turn_scores
    and tool_rewards (208).
    """
    messages = list(kwargs["raw_prompt"])
    request_id = uuid.UUID(int=limits["rng"].getrandbits(128)).hex
    interaction_kwargs = kwargs["extra_info"]["interaction_kwargs"]
    if "name" not in interaction_kwargs:
        raise ValueError("'name' key is required in interaction_kwargs")
    interaction = interaction_map[interaction_kwargs["name"]]
    await interaction.start_interaction(request_id, **interaction_kwargs)
    response_len = 0
    assistant_turns = 0
    user_turns = 0
    turn_scores = []
    cut = None
    while True:
        # GENERATING
        reply = model.next()
        content = "No command this time." if reply is None else "Let me work out the next step.\n" + reply
        assistant_turns += 1
        response_len += words(content)
        if response_len >= limits["response_length"]:
            cut = "response_length"
            break
        if limits["max_assistant_turns"] and assistant_turns >= limits["max_assistant_turns"]:
            cut = "max_assistant_turns"
            break
        if limits["max_user_turns"] and user_turns >= limits["max_user_turns"]:
            cut = "max_user_turns"
            break
        messages.append({"role": "assistant", "content": content})
        # INTERACTING
        done, response, score, _ = await interaction.generate_response(request_id, messages, **interaction_kwargs)
        user_turns += 1
        messages.append({"role": "user", "content": response})
        if score is not None:
            turn_scores.append(score)
        response_len += words(response)
        if done:
            break
    extra_fields = {"turn_scores": turn_scores, "tool_rewards": [], "raw_prompt": kwargs["raw_prompt"]}
    return {"num_turns": user_turns + assistant_turns + 1, "assistant_turns": assistant_turns, "cut": cut, "turn_scores": turn_scores}, extra_fields


def verl_reward(compute_score, kwargs, rollout, extra_fields):
    """The reward loop's call (verl/experimental/reward_loop/reward_manager/naive.py:42-84): extra_info is
    the row's, updated with the agent loop's extra fields (tool_extra_fields, agent_loop.py:721), plus
    num_turns and rollout_reward_scores; compute_score(data_source=, solution_str=, ground_truth=, extra_info=)."""
    extra_info = dict(kwargs.get("extra_info", {}))
    extra_info.update(extra_fields.items())
    extra_info["num_turns"] = rollout["num_turns"]
    extra_info["rollout_reward_scores"] = {}
    return compute_score(
        data_source=kwargs["data_source"],
        solution_str="(the decoded response)",
        ground_truth=kwargs["reward_model"]["ground_truth"],
        extra_info=extra_info,
    )


def run_verl(recipe, rows, replies, rng):
    sys.path[:0] = [os.path.join(recipe, "verl_run"), recipe]
    overrides = run_sh_overrides(os.path.join(recipe, "verl_run", "run.sh"))
    limits = {
        "max_assistant_turns": hydra_int(overrides.get("actor_rollout_ref.rollout.multi_turn.max_assistant_turns", "null")),
        "max_user_turns": hydra_int(overrides.get("actor_rollout_ref.rollout.multi_turn.max_user_turns", "null")),
        "response_length": int(overrides["data.max_response_length"]),
        "rng": rng,
    }
    if overrides.get("actor_rollout_ref.rollout.agent.default_agent_loop") != "tool_agent":
        raise ValueError("run.sh does not select verl's tool agent loop")
    import prepare_data
    from reward import compute_score

    with open(os.path.join(recipe, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    name, cls = interaction_class(os.path.join(recipe, "verl_run", "interaction_config.yaml"))
    out = {}
    for row in rows:
        v = prepare_data.verl_row(config, row)
        # RLHFDataset hands the chat prompt to the agent loop as raw_prompt (data.return_raw_chat=True).
        kwargs = {**v, "raw_prompt": v["prompt"]}
        # One agent loop, hence one interaction, per sample: agent_loop.py:509-518 instantiates the loop,
        # whose __init__ builds its interaction map (tool_agent_loop.py:127-131, interaction_registry.py:76-81).
        interaction_map = {name: cls(config={"name": name})}
        rollout, extra_fields = asyncio.run(verl_rollout(interaction_map, kwargs, ScriptedModel(replies.get(row["id"], [])), limits))
        rollout["reward"] = verl_reward(compute_score, kwargs, rollout, extra_fields)
        out[row["id"]] = rollout
    return out


def run_trl(recipe, rows, replies, batch):
    sys.path[:0] = [os.path.join(recipe, "trl_run"), recipe]
    import train_grpo

    args = train_grpo.grpo_config(os.path.join(recipe, "runs", "harness"))
    # grpo_trainer.py:738-740: None means no limit.
    max_iterations = args.max_tool_calling_iterations if args.max_tool_calling_iterations is not None else sys.maxsize
    dataset = train_grpo.dataset(os.path.join(recipe, "data", "train.jsonl"))
    by_id = {json.loads(x["row"])["id"]: x for x in dataset}
    inputs_all = [by_id[r["id"]] for r in rows]
    pool = [train_grpo.ToyEnv()]  # the probe instance seeds the pool (grpo_trainer.py:640-657)
    out = {}
    for start in range(0, len(inputs_all), batch):
        inputs = inputs_all[start : start + batch]
        # Draw one pooled instance per rollout, creating more only when the batch needs them
        # (grpo_trainer.py:2288-2296); the same instances serve the next batch after a new reset.
        while len(pool) < len(inputs):
            pool.append(train_grpo.ToyEnv())
        environments = pool[: len(inputs)]
        # Tools: each environment's public methods but reset/get_reward (2300-2318).
        tool_dicts = [
            {n: getattr(env, n) for n in dir(env) if not n.startswith("_") and n not in ("reset", "get_reward") and callable(getattr(env, n))}
            for env in environments
        ]
        for env, x in zip(environments, inputs):
            env.reset(**x)  # 2320-2324
        models = [ScriptedModel(replies.get(json.loads(x["row"])["id"], [])) for x in inputs]

        def generate(i):
            reply = models[i].next()
            if reply is None:
                return {"role": "assistant", "content": "Done."}
            return {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": "act", "arguments": {"command": reply}}}]}

        completions = [[generate(i)] for i in range(len(inputs))]
        calls = [0] * len(inputs)
        # _tool_call_loop (grpo_trainer.py:1933-2141).
        tool_calls = [c[0].get("tool_calls") for c in completions]
        idxs_with_tool = [i for i, t in enumerate(tool_calls) if t]
        tool_calls = [tool_calls[i] for i in idxs_with_tool]
        iteration_num = 0
        while idxs_with_tool and iteration_num < max_iterations:  # 1945
            for idx, i in enumerate(idxs_with_tool):
                for call in tool_calls[idx]:
                    function = call["function"]
                    try:  # 1968-1978: a tool's exception becomes its result
                        result = tool_dicts[i][function["name"]](**function["arguments"])
                    except Exception as e:  # noqa: BLE001
                        result = {"error": str(e)}
                    calls[i] += 1
                    completions[i].append({"role": "tool", "name": function["name"], "content": str(result)})
            post = {i: generate(i) for i in idxs_with_tool}  # 2086
            for i in idxs_with_tool:
                completions[i].append(post[i])
            tool_calls = [post[i].get("tool_calls") for i in idxs_with_tool]  # 2136-2138
            idxs_with_tool = [i for i, t in zip(idxs_with_tool, tool_calls) if t]
            tool_calls = [t for t in tool_calls if t]
            iteration_num += 1
        # _calculate_rewards (1612-1664): every column but prompt/completion/completion_ids, then
        # trainer_state, log_extra, log_metric and environments.
        keys = [k for k in inputs[0] if k not in ("prompt", "completion", "completion_ids")]
        reward_kwargs = {k: [x[k] for x in inputs] for k in keys}
        logged = {}
        reward_kwargs.update(trainer_state=None, log_extra=lambda *a, **k: None, log_metric=lambda name, value: logged.__setitem__(name, value), environments=environments)
        rewards = train_grpo.toy_reward(prompts=[x["prompt"] for x in inputs], completions=completions, completion_ids=[[] for _ in inputs], **reward_kwargs)
        for i, x in enumerate(inputs):
            out[json.loads(x["row"])["id"]] = {"reward": rewards[i], "calls": calls[i], "iterations": iteration_num}
    return out


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: python3 recipeLoops.py RECIPE_DIR CASE.json")
    recipe = os.path.abspath(argv[0])
    with open(argv[1], encoding="utf-8") as f:
        case = json.load(f)
    with open(os.path.join(recipe, "data", "train.jsonl"), encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()][: case["rows"]]
    install_shims()
    import random

    out = {
        "verl": run_verl(recipe, rows, case["replies"], random.Random(case.get("seed", 0))),
        "trl": run_trl(recipe, rows, case["replies"], case["batch"]),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
