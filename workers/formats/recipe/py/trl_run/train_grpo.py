# @RUNS@
"""The toy task on TRL's GRPOTrainer: python3 trl_run/train_grpo.py [--model MODEL] [--out DIR]

TRL's GRPOTrainer(environment_factory=ToyEnv) builds one ToyEnv per rollout, calls
reset(**row) with the dataset row's columns, and exposes ToyEnv's public methods (here `act`) as
tools; a reward function is called as reward_func(prompts=, completions=, completion_ids=,
**columns, trainer_state=, log_extra=, log_metric=, environments=) with one environment per
completion (trl/trainer/grpo_trainer.py, _calculate_rewards). Needs trl with environment_factory
and transformers >= 5.2.0.
"""
import argparse
import itertools
import json
import os
import sys

from datasets import Dataset
from trl import GRPOConfig, GRPOTrainer

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
from toyenv.text import TextEpisode, messages, rollout_key  # noqa: E402

with open(os.path.join(ROOT, "config.json"), encoding="utf-8") as f:
    CONFIG = json.load(f)

# Numbers the rollouts of this process: with the row's id, a rollout's key for the toy's noise.
_ROLLOUTS = itertools.count()

TOOL_NOTE = " Send each command with the `act` tool, one call per turn; stop calling it once the episode is over."


class ToyEnv:
    def reset(self, row, **kwargs):
        data = json.loads(row)
        self.episode = TextEpisode(CONFIG, data, rollout_key(f"{data['id']}/{next(_ROLLOUTS)}"))
        return None

    def act(self, command: str) -> str:
        """
        Sends one command to the environment.

        Args:
            command: One command in the task's words, e.g. `SEARCH e1 a0` or `ANSWER v3`.

        Returns:
            The environment's observation.
        """
        if self.episode.done:
            return "The episode is over."
        return self.episode.act(command) or "The episode is over."


def toy_reward(prompts, completions, completion_ids, environments=None, log_metric=None, **kwargs):
    """The episode's training reward; a rollout that stopped early ends as an unanswered episode."""
    if environments is None:
        raise ValueError("toy_reward needs GRPOTrainer's environments (pass environment_factory=ToyEnv)")
    rewards = [env.episode.reward() for env in environments]
    if log_metric is not None:
        log_metric("toy/success", sum(env.episode.episode.success for env in environments) / len(environments))
    return rewards


def dataset(path):
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    out = []
    for r in rows:
        chat = messages(CONFIG, r)
        chat[0] = {**chat[0], "content": chat[0]["content"] + TOOL_NOTE}
        out.append({"prompt": chat, "row": json.dumps(r, ensure_ascii=False)})
    return Dataset.from_list(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=DEFAULT_MODEL)
    ap.add_argument("--data", default=os.path.join(ROOT, "data", "train.jsonl"))
    ap.add_argument("--out", default=os.path.join(ROOT, "runs", "trl"))
    args = ap.parse_args()
    config = grpo_config(args.out)
    # accelerate launch sets WORLD_SIZE; each process adds its own micro-batches to a step and a
    # generation (grpo_config.py:1075-1091), so the values below hold on one process only.
    world = int(os.environ.get("WORLD_SIZE", "1"))
    per_step = config.per_device_train_batch_size * getattr(config, "gradient_accumulation_steps", 1) * world
    per_gen = config.per_device_train_batch_size * getattr(config, "steps_per_generation", getattr(config, "gradient_accumulation_steps", 1)) * world
    print(f"{world} process(es): {per_step} completions per optimizer step, {per_gen} per generation "
          f"(the playground: {CONFIG['batch'] * CONFIG['group']} per generation)")
    trainer = GRPOTrainer(
        model=args.model,
        args=config,
        train_dataset=dataset(args.data),
        reward_funcs=[toy_reward],
        environment_factory=ToyEnv,
    )
    trainer.train()


# @GENERATED@


if __name__ == "__main__":
    main()
