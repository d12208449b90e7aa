"""verl custom reward function: custom_reward_function.path=verl/reward.py, name=compute_score.

verl's reward managers call compute_score(data_source, solution_str, ground_truth, extra_info)
(verl/workers/reward_manager/naive.py; verl/experimental/reward_loop/reward_manager/naive.py
merges the agent loop's extra fields, `turn_scores` among them, into extra_info). The interaction
already scored each turn with the episode's reward as it stood, so the rollout's reward is the last
turn score. A rollout cut before its first turn was answered (the response budget ran out) never
reached the environment: it scores as an episode that took no turn.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from toyenv.text import TextEpisode  # noqa: E402

_CONFIG = None


def _config():
    global _CONFIG
    if _CONFIG is None:
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "config.json"), encoding="utf-8") as f:
            _CONFIG = json.load(f)
    return _CONFIG


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    if not str(data_source).startswith("toyenv/"):
        raise ValueError(f"data_source {data_source!r}: this reward function scores the recipe's toyenv/* rows only")
    extra_info = extra_info or {}
    scores = list(extra_info.get("turn_scores") or [])
    if scores:
        return float(scores[-1])
    row = extra_info.get("interaction_kwargs", {}).get("row")
    if row is None:
        raise ValueError("extra_info has neither turn_scores nor interaction_kwargs.row: run with the interaction (see run.sh)")
    return TextEpisode(_config(), json.loads(row), 0).reward()
