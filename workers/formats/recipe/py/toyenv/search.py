"""Multi-hop search over a per-episode knowledge base, with a simulated noisy engine (ZeroSearch).

A port of the playground's workers/core/envs/search.ts: the same draws, observations and rewards.
An action is `SEARCH <entity> <attribute|relation>` (the engine returns `RES <value>` or
`<entity> ;`) or `ANSWER <value>`. Reward 1 for the right answer, 0 for a wrong one, and
-formatPenalty for no answer by the turn limit.
"""
import math

from .common import NOISE_STREAM, PAD, RM_STREAM, EpisodeBase
from .rng import Rng, fork_seed, hash_uniform

SPECIALS = ["·", "<s>", "Q", "SEARCH", "ANSWER", "RES"]
BOS, Q, SEARCH, ANSWER, RES = 1, 2, 3, 4, 5


def noise_at(i, cfg):
    """ZeroSearch's curriculum: p_i = p_s + (b^(i/m) - 1) / (b - 1) * (p_e - p_s), p_e once i >= m.

    i is the training step, counted from 1 as ZeroSearch counts: iteration i's batch has p_i.
    """
    if cfg["noiseSchedule"] == "fixed" or i >= cfg["noiseIters"]:
        return cfg["noise"]
    x = max(0, i) / cfg["noiseIters"]
    b = cfg["noiseBase"]
    f = x if abs(b - 1) < 1e-9 else (math.pow(b, x) - 1) / (b - 1)
    return cfg["noiseStart"] + f * (cfg["noise"] - cfg["noiseStart"])


class Layout:
    def __init__(self, cfg):
        self.E, self.A, self.V = cfg["entities"], cfg["attributes"], cfg["values"]
        self.hops = cfg["hops"]
        self.R = self.A if self.hops > 1 else 0
        self.ent0 = len(SPECIALS)
        self.att0 = self.ent0 + self.E
        self.val0 = self.att0 + self.A
        self.rel0 = self.val0 + self.V
        self.END = self.rel0 + self.R
        self.vocab = (
            SPECIALS
            + [f"e{i}" for i in range(self.E)]
            + [f"a{i}" for i in range(self.A)]
            + [f"v{i}" for i in range(self.V)]
            + [f"r{i}" for i in range(self.R)]
            + ([";"] if self.hops > 1 else [])
        )
        self.action_len = 3
        self.max_turns = cfg["maxTurns"]


def sample_rows(cfg, batch_seed, iteration, prompts):
    """The task instances of one playground batch, in the order its generator draws them."""
    L = Layout(cfg)
    rng = Rng(batch_seed)
    rows = []
    for b in range(prompts):
        kb = [rng.int(L.V) for _ in range(L.E * L.A)]
        links = [rng.int(L.E) for _ in range(L.E * L.R)]
        question = [rng.int(L.E)] + [rng.int(L.R) for _ in range(1, L.hops)] + [rng.int(L.A)]
        e = question[0]
        for h in range(1, L.hops):
            e = links[e * L.R + question[h]]
        truth = kb[e * L.A + question[L.hops]]
        words = [f"e{question[0]}"] + [f"r{r}" for r in question[1 : L.hops]] + [f"a{question[L.hops]}"]
        rows.append({"index": b, "question": ["Q"] + words, "answer": ["ANSWER", f"v{truth}"], "tables": {"kb": kb, "links": links, "question": question, "truth": truth}})
    keys = {"rm_seed": fork_seed(batch_seed, RM_STREAM), "noise_seed": Rng(fork_seed(batch_seed, NOISE_STREAM)).next_u32()}
    for r in rows:
        r["keys"] = keys
        r["search_noise"] = noise_at(iteration, cfg)
    return rows


class Episode(EpisodeBase):
    def __init__(self, row, cfg, n):
        penalty = cfg["formatPenalty"]
        super().__init__(row, cfg, n, (-penalty, 1))
        self.L = Layout(cfg)
        self.t = row["tables"]
        self.p = noise_at(row["iteration"], cfg)
        self.penalty = penalty

    def lookup(self, turn, right, kinds):
        seed = self.row["keys"]["noise_seed"]
        if self.p <= 0 or kinds < 2 or hash_uniform(seed, self.n, turn, 0) >= self.p:
            return right, False
        w = math.floor(hash_uniform(seed, self.n, turn, 1) * (kinds - 1))
        return (w + 1 if w >= right else w), True

    def step(self, turn, a):
        """One turn's action tokens [3] -> (observation tokens [2], action mask [3])."""
        L = self.L
        obs, mask = [PAD, PAD], [0, 0, 0]
        if self.done:
            return obs, mask
        act, x, y = a
        if act == SEARCH and L.ent0 <= x < L.ent0 + L.E and L.att0 <= y < L.att0 + L.A:
            doc, _ = self.lookup(turn, self.t["kb"][(x - L.ent0) * L.A + (y - L.att0)], L.V)
            obs, mask = [RES, L.val0 + doc], [1, 1, 1]
        elif act == SEARCH and L.ent0 <= x < L.ent0 + L.E and L.rel0 <= y < L.rel0 + L.R:
            doc, _ = self.lookup(turn, self.t["links"][(x - L.ent0) * L.R + (y - L.rel0)], L.E)
            obs, mask = [L.ent0 + doc, L.END], [1, 1, 1]
        elif act == ANSWER and L.val0 <= x < L.val0 + L.V:
            right = x - L.val0 == self.t["truth"]
            self.finish(1 if right else 0, right)
            mask = [1, 1, 0]
        else:
            self.finish(0, False)
            mask = [1, 1, 1]
        if turn == L.max_turns - 1 and not self.done:
            self.end_unanswered()
        return obs, mask

    def end_unanswered(self):
        """No answer by the turn limit (or a rollout that stopped without one)."""
        self.finish(-self.penalty if self.penalty > 0 else 0, False)
