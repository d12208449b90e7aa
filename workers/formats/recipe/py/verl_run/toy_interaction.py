"""The toy task as a verl Interaction: each assistant turn is one action, the reply is the observation.

verl's tool agent loop (verl/experimental/agent_loop/tool_agent_loop.py) calls
`start_interaction(request_id, **interaction_kwargs)` once per rollout, then
`generate_response(instance_id, messages, **kwargs) -> (should_terminate, response, score, extra)`
after every assistant message (verl/interactions/base.py). The score of each turn is the episode's
training reward as it stands (the reward it would get if it ended now); verl keeps them in
`turn_scores`, and reward.py's compute_score reads the last one.
"""
import copy
import json
import os
import sys
from typing import Any, Optional

from verl.interactions.base import BaseInteraction

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from toyenv.text import TextEpisode, rollout_key  # noqa: E402


def load_config(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


class ToyEnvInteraction(BaseInteraction):
    def __init__(self, config: dict):
        super().__init__(config)
        here = os.path.dirname(os.path.abspath(__file__))
        self.toy_config = load_config(config.get("toy_config", os.path.join(here, "..", "config.json")))
        self._episodes = {}

    async def start_interaction(self, instance_id: Optional[str] = None, row: Optional[str] = None, **kwargs) -> str:
        if instance_id is None:
            raise ValueError("ToyEnvInteraction needs the rollout's instance_id (it keys the episode's noise)")
        if row is None:
            raise ValueError("interaction_kwargs must carry the episode as `row` (see prepare_data.py)")
        self._episodes[instance_id] = TextEpisode(self.toy_config, json.loads(row), rollout_key(instance_id))
        return instance_id

    async def generate_response(self, instance_id: str, messages: list[dict[str, Any]], **kwargs) -> tuple[bool, str, float, dict[str, Any]]:
        ep = self._episodes[instance_id]
        reply = next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "assistant"), "")
        obs = ep.act(reply)
        if ep.done:
            # verl's tool agent loop never calls finalize_interaction: an ended episode is dropped here.
            del self._episodes[instance_id]
            return True, obs or "(episode over)", ep.reward(), {"success": ep.episode.success}
        return False, obs, await self.calculate_score(instance_id), {}

    async def calculate_score(self, instance_id: str, **kwargs) -> float:
        """The reward if the episode ended now (a copy is ended; the episode goes on)."""
        ep = self._episodes[instance_id]
        if ep.done:
            return ep.reward()
        probe = copy.deepcopy(ep.episode)
        probe.end_unanswered()
        return probe.reward

    async def finalize_interaction(self, instance_id: str, **kwargs) -> None:
        self._episodes.pop(instance_id, None)

