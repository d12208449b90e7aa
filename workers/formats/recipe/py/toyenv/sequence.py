"""Hidden-sequence matching (the collapse dial), a port of workers/core/envs/sequence.ts.

The prompt names a task id `T<k>`; the policy writes `seqLen` symbols in one turn. Reward 1 for
the hidden target exactly (`exact`), or the fraction of matching positions (`partial`).
"""
from .common import EpisodeBase, RM_STREAM, TARGET_STREAM
from .rng import Rng, fork_seed

SPECIALS = ["·", "<s>", "✓", "✗"]
BOS, YES, NO = 1, 2, 3


class Layout:
    def __init__(self, cfg):
        self.S, self.Ls, self.T = cfg["symbols"], cfg["seqLen"], cfg["targets"]
        self.id0 = len(SPECIALS)
        self.sym0 = self.id0 + self.T
        self.vocab = SPECIALS + [f"T{i}" for i in range(self.T)] + [f"s{i}" for i in range(self.S)]
        self.action_len = self.Ls
        self.max_turns = 1


def targets(cfg, seed):
    """The hidden targets, fixed by the run's seed: [targets][seqLen] symbol indices."""
    r = Rng(seed).fork(TARGET_STREAM)
    flat = [r.int(cfg["symbols"]) for _ in range(cfg["targets"] * cfg["seqLen"])]
    L = cfg["seqLen"]
    return [flat[k * L : (k + 1) * L] for k in range(cfg["targets"])]


def sample_rows(cfg, batch_seed, iteration, prompts, seed):
    rng = Rng(batch_seed)
    hidden = targets(cfg, seed)
    rows = []
    for b in range(prompts):
        k = rng.int(cfg["targets"])
        rows.append({"index": b, "question": [f"T{k}"], "answer": [f"s{s}" for s in hidden[k]], "tables": {"target_id": k, "target": hidden[k]}})
    keys = {"rm_seed": fork_seed(batch_seed, RM_STREAM)}
    for r in rows:
        r["keys"] = keys
    return rows


class Episode(EpisodeBase):
    def __init__(self, row, cfg, n):
        super().__init__(row, cfg, n, (0, 1))
        self.L = Layout(cfg)

    def step(self, turn, a):
        L = self.L
        if self.done:
            return [0], [0] * L.Ls
        target = [L.sym0 + s for s in self.row["tables"]["target"]]
        hits = sum(1 for j in range(L.Ls) if a[j] == target[j])
        exact = hits == L.Ls
        self.finish(hits / L.Ls if self.cfg["seqReward"] == "partial" else (1 if exact else 0), exact)
        return [YES if exact else NO], [1] * L.Ls

    def end_unanswered(self):
        self.finish(0, False)
