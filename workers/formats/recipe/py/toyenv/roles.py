"""A planner and an executor in one episode (Dr. MAS), a port of workers/core/envs/roles.ts.

  prompt   `Q e a @P`                          the question; the planner acts first
  turn 0   planner   `TELL <entity> <attr>`    -> `ok @X`
  turn 1   executor  `LOOK <entity> <attr>`    -> `@P <value>`
  turn 2   planner   `ANSWER <value>`          (the episode ends)
Planner reward (1[told the asked fact] + 1[right answer]) / 2; executor reward
roleScale * 1[looked up the asked fact] + roleOffset; the episode reward is their mean.
"""
from .common import PAD, RM_STREAM, EpisodeBase
from .rng import Rng, f32, fork_seed

SPECIALS = ["·", "<s>", "Q", "@P", "@X", "TELL", "LOOK", "ANSWER", "ok"]
BOS, Q, RP, RX, TELL, LOOK, ANSWER, OKT = 1, 2, 3, 4, 5, 6, 7, 8
ROLE_NAMES = ["planner", "executor"]
ROLE_OF_TURN = [0, 1, 0]


class Layout:
    def __init__(self, cfg):
        self.E, self.A, self.V = cfg["entities"], cfg["attributes"], cfg["values"]
        self.ent0 = len(SPECIALS)
        self.att0 = self.ent0 + self.E
        self.val0 = self.att0 + self.A
        self.vocab = SPECIALS + [f"e{i}" for i in range(self.E)] + [f"a{i}" for i in range(self.A)] + [f"v{i}" for i in range(self.V)]
        self.action_len = 3
        self.max_turns = 3


def sample_rows(cfg, batch_seed, iteration, prompts):
    L = Layout(cfg)
    rng = Rng(batch_seed)
    rows = []
    for b in range(prompts):
        kb = [rng.int(L.V) for _ in range(L.E * L.A)]
        e = rng.int(L.E)
        a = rng.int(L.A)
        truth = kb[e * L.A + a]
        rows.append({"index": b, "question": ["Q", f"e{e}", f"a{a}", "@P"], "answer": ["ANSWER", f"v{truth}"], "tables": {"kb": kb, "entity": e, "attribute": a, "truth": truth}})
    keys = {"rm_seed": fork_seed(batch_seed, RM_STREAM)}
    for r in rows:
        r["keys"] = keys
    return rows


class Episode(EpisodeBase):
    def __init__(self, row, cfg, n):
        scale, offset = cfg["roleScale"], cfg["roleOffset"]
        lo, hi = min(offset, scale + offset), max(offset, scale + offset)
        super().__init__(row, cfg, n, (lo / 2, (1 + hi) / 2))
        self.L = Layout(cfg)
        self.told_right = 0
        self.looked_right = 0
        self.role_reward = [0.0, 0.0]
        self.turn_role = [-1, -1, -1]

    def end(self, right):
        rP = (self.told_right + (1 if right else 0)) / 2
        rX = self.cfg["roleScale"] * self.looked_right + self.cfg["roleOffset"]
        self.role_reward = [f32(rP), f32(rX)]
        self.finish((rP + rX) / 2, right)

    def step(self, turn, a):
        L, tb = self.L, self.row["tables"]
        if self.done:
            return [PAD, PAD], [0, 0, 0]
        act, x, y = a
        self.turn_role[turn] = ROLE_OF_TURN[turn] if turn < 3 else 0
        fact = L.ent0 <= x < L.ent0 + L.E and L.att0 <= y < L.att0 + L.A
        asked = fact and x - L.ent0 == tb["entity"] and y - L.att0 == tb["attribute"]
        if turn == 0 and act == TELL and fact:
            self.told_right = 1 if asked else 0
            return [OKT, RX], [1, 1, 1]
        if turn == 1 and act == LOOK and fact:
            self.looked_right = 1 if asked else 0
            return [RP, L.val0 + tb["kb"][(x - L.ent0) * L.A + (y - L.att0)]], [1, 1, 1]
        if turn == 2 and act == ANSWER and L.val0 <= x < L.val0 + L.V:
            self.end(x - L.val0 == tb["truth"])
            return [PAD, PAD], [1, 1, 0]
        self.end(False)
        return [PAD, PAD], [1, 1, 1]

    def end_unanswered(self):
        self.end(False)
