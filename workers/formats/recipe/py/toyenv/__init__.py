"""The playground's toy tasks in plain Python (standard library only), for verl and TRL runs.

Same seed, same episodes; same actions, same observations and rewards as the playground
(workers/core/envs/*.ts there). `config` is the recipe's config.json: {"task", "seed", "batch",
"group", "env": {...the playground's env.* knobs...}}.
"""
from . import roles, search, sequence, tools
from .rng import fork_seed

TASKS = {"search": search, "tools": tools, "roles": roles, "sequence": sequence}


def task_module(config):
    task = config.get("task")
    if task not in TASKS:
        raise ValueError(f"config task {task!r}: expected one of {', '.join(TASKS)}")
    return TASKS[task]


def batch_rows(config, iteration, prompts):
    """The task instances of the playground's batch `iteration` (1-based): its first `prompts` prompts."""
    mod = task_module(config)
    seed = config["seed"]
    batch_seed = fork_seed(seed, iteration)
    if mod is sequence:
        rows = mod.sample_rows(config["env"], batch_seed, iteration, prompts, seed)
    else:
        rows = mod.sample_rows(config["env"], batch_seed, iteration, prompts)
    out = []
    for r in rows:
        head = {"id": f"{config['task']}-{iteration}-{r['index']}", "task": config["task"], "seed": seed, "iteration": iteration}
        out.append({**head, **r})
    return out


def dataset_rows(config, episodes):
    """`episodes` rows: batch 1's prompts, then batch 2's, ... (`batch` prompts each), as the playground draws them."""
    if not isinstance(episodes, int) or episodes < 1:
        raise ValueError(f"episodes {episodes!r}: expected a positive integer")
    B = config["batch"]
    rows = []
    iteration = 1
    while len(rows) < episodes:
        rows += batch_rows(config, iteration, min(B, episodes - len(rows)))
        iteration += 1
    return rows


def layout(config):
    return task_module(config).Layout(config["env"])


def make_episode(config, row, n):
    """A rollout of `row` with rollout key n (the playground's trajectory index in its batch)."""
    if row.get("task") != config["task"]:
        raise ValueError(f"row {row.get('id')!r} is a {row.get('task')!r} episode; this config's task is {config['task']!r}")
    return task_module(config).Episode(row, config["env"], n)
