"""The toy task as a verl Interaction: each assistant turn is one action, the reply is the observation.

verl's tool agent loop (verl/experimental/agent_loop/tool_agent_loop.py) calls
`start_interaction(request_id, **interaction_kwargs)` once per rollout, then
`generate_response(instance_id, messages, **kwargs) -> (should_terminate, response, score, extra)`
after every assistant message (verl/interactions/base.py). The score of each turn is the episode's
training reward as it stands (the reward it would get if it ended now); verl keeps them in
`turn_scores`, and reward.py's compute_score reads the last one.

verl never calls finalize_interaction, and its loop may stop a rollout without telling the interaction
(the response budget, a turn limit: tool_agent_loop.py:254-259). At b178a3cd5 every rollout builds its
own interaction (agent_loop.py:509-518 instantiates the loop per sample; its __init__ builds the
interaction, tool_agent_loop.py:127-131), so a cut-off episode goes with it; where one interaction serves
many rollouts, it keeps at most `max_live_episodes` (interaction_config.yaml; default 4 x batch x group,
at least 4096) and drops the least recently used, so the episodes of cut-off rollouts do not pile up.
"""
import copy
from collections import OrderedDict
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
        default_live = max(4096, 4 * self.toy_config["batch"] * self.toy_config["group"])
        self.max_live = int(config.get("max_live_episodes", default_live))
        if self.max_live < 1:
            raise ValueError(f"max_live_episodes {self.max_live}: expected a positive integer")
        # instance id -> episode, least recently used first.
        self._episodes = OrderedDict()
        # Ids dropped for room (the newest 65,536 of them: ids are small), to name the cause if one comes back.
        self._dropped = OrderedDict()

    async def start_interaction(self, instance_id: Optional[str] = None, row: Optional[str] = None, **kwargs) -> str:
        if instance_id is None:
            raise ValueError("ToyEnvInteraction needs the rollout's instance_id (it keys the episode's noise)")
        if row is None:
            raise ValueError("interaction_kwargs must carry the episode as `row` (see prepare_data.py)")
        self._episodes[instance_id] = TextEpisode(self.toy_config, json.loads(row), rollout_key(instance_id))
        self._episodes.move_to_end(instance_id)
        while len(self._episodes) > self.max_live:
            dropped, _ = self._episodes.popitem(last=False)
            self._dropped[dropped] = True
            if len(self._dropped) > 65536:
                self._dropped.popitem(last=False)
        return instance_id

    def _episode(self, instance_id):
        if instance_id not in self._episodes:
            if instance_id in self._dropped:
                raise KeyError(
                    f"episode {instance_id} was dropped: more than max_live_episodes={self.max_live} episodes were live in this "
                    "interaction at once; raise max_live_episodes in interaction_config.yaml"
                )
            raise KeyError(f"episode {instance_id} was never started (start_interaction) or has ended")
        self._episodes.move_to_end(instance_id)
        return self._episodes[instance_id]

    def live_episodes(self) -> int:
        """Episodes held: started, neither ended nor dropped."""
        return len(self._episodes)

    async def generate_response(self, instance_id: str, messages: list[dict[str, Any]], **kwargs) -> tuple[bool, str, float, dict[str, Any]]:
        ep = self._episode(instance_id)
        reply = next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "assistant"), "")
        obs = ep.act(reply)
        if ep.done:
            # verl's tool agent loop never calls finalize_interaction: an ended episode is dropped here.
            del self._episodes[instance_id]
            return True, obs or "(episode over)", ep.reward(), {"success": ep.episode.success}
        return False, obs, await self.calculate_score(instance_id), {}

    async def calculate_score(self, instance_id: str, **kwargs) -> float:
        """The reward if the episode ended now (a copy is ended; the episode goes on)."""
        ep = self._episode(instance_id)
        if ep.done:
            return ep.reward()
        probe = copy.deepcopy(ep.episode)
        probe.end_unanswered()
        return probe.reward

    async def finalize_interaction(self, instance_id: str, **kwargs) -> None:
        self._episodes.pop(instance_id, None)

