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


# The doubles nearest ln 2, sqrt 2 and sqrt 1/2 (the same literals as workers/core/envs/portableMath.ts).
LN2 = 0.6931471805599453
SQRT2 = 1.4142135623730951
SQRT1_2 = 0.7071067811865476


def portable_log(b):
    """ln b from +, *, / only, in the playground's order of operations (portableMath.ts portableLog)."""
    k = 0
    r = b
    while r >= SQRT2:
        r = r / 2
        k = k + 1
    while r < SQRT1_2:
        r = r * 2
        k = k - 1
    s = (r - 1) / (r + 1)
    s2 = s * s
    term = s
    total = s
    for n in range(3, 42, 2):
        term = term * s2
        total = total + term / n
    return k * LN2 + 2 * total


def portable_exp(y):
    """e^y, as portableMath.ts portableExp computes it."""
    k = math.floor(y / LN2 + 0.5)
    r = y - k * LN2
    term = 1.0
    total = 1.0
    for n in range(1, 28):
        term = (term * r) / n
        total = total + term
    out = total
    for _ in range(k):
        out = out * 2
    for _ in range(-k):
        out = out / 2
    return out


def portable_pow(b, x):
    """b^x as the playground computes it: math.pow (the C library's) differs from V8's Math.pow in the
    last bit for about one exponent in ten, so both sides use the same basic operations instead."""
    if x == 0 or b == 1:
        return 1.0
    return portable_exp(x * portable_log(b))


def noise_at(i, cfg):
    """ZeroSearch's curriculum: p_i = p_s + (b^(i/m) - 1) / (b - 1) * (p_e - p_s), p_e once i >= m.

    i is the training step, counted from 1 as ZeroSearch counts: iteration i's batch has p_i. Used
    to write the rows (`search_noise`); an episode reads its noise from its row.
    """
    if cfg["noiseSchedule"] == "fixed" or i >= cfg["noiseIters"]:
        return cfg["noise"]
    x = max(0, i) / cfg["noiseIters"]
    b = cfg["noiseBase"]
    f = x if abs(b - 1) < 1e-9 else (portable_pow(b, x) - 1) / (b - 1)
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
        # The row's own noise (what the page wrote), never recomputed: the episode is the row's.
        if "search_noise" not in row:
            raise ValueError(f"row {row.get('id')!r} has no search_noise: write the rows with make_data.py or the page")
        self.p = row["search_noise"]
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
