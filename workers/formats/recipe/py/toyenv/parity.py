"""Replays transcripts of token actions through the text interface, for the parity check.

    python3 -m toyenv.parity CASE.json OUT.json

CASE: {"config": {...}, "prompts": B, "group": G, "batches": [{"iteration": i, "actions":
[[N * actionLen tokens] per turn]}]}, N = B * G, trajectory n of prompt floor(n / G). OUT holds,
per batch, the rows this package draws and every trajectory's observations, masks and rewards.
"""
import json
import sys

from . import batch_rows, layout
from .text import TextEpisode


def replay(config, prompts, group, batch):
    L = layout(config)
    rows = batch_rows(config, batch["iteration"], prompts)
    eps = [TextEpisode(config, rows[n // group], n) for n in range(prompts * group)]
    obs_turns, mask_turns = [], []
    for turn, actions in enumerate(batch["actions"]):
        obs_all, mask_all = [], []
        for n, te in enumerate(eps):
            words = " ".join(L.vocab[t] for t in actions[n * L.action_len : (n + 1) * L.action_len])
            obs, mask = te.episode.step(turn, te.parse(words))
            obs_all += obs
            mask_all += mask
        obs_turns.append(obs_all)
        mask_turns.append(mask_all)
    out = {
        "rows": rows,
        "obs": obs_turns,
        "mask": mask_turns,
        "reward": [te.episode.reward for te in eps],
        "reward_true": [te.episode.reward_true for te in eps],
        "success": [1 if te.episode.success else 0 for te in eps],
    }
    if config["task"] == "tools":
        out["turn_rewards"] = [r for te in eps for r in te.episode.turn_rewards]
        out["step_rewards"] = [r for te in eps for r in te.episode.step_rewards]
    if config["task"] == "roles":
        out["role_reward"] = [r for te in eps for r in te.episode.role_reward]
        out["turn_role"] = [r for te in eps for r in te.episode.turn_role]
    return out


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: python3 -m toyenv.parity CASE.json OUT.json")
    with open(argv[0], encoding="utf-8") as f:
        case = json.load(f)
    result = [replay(case["config"], case["prompts"], case["group"], b) for b in case["batches"]]
    with open(argv[1], "w", encoding="utf-8") as f:
        json.dump(result, f, ensure_ascii=False)


if __name__ == "__main__":
    main(sys.argv[1:])
