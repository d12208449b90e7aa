"""Multi-step tool use judged by CM2 checklists, a port of workers/core/envs/tools.ts.

A request `REQ <amount> <currency>` needs the calls RATE <currency>, CONV <amount> <rate>,
BOOK <money>, CONFIRM <code> in order (the first `toolSteps` of them), one per turn; the tools
answer from per-episode tables (`= <result>`). Each turn carries the checklist of the reference
call: a strict tool item (weight 1/2) and one item per argument (sharing the other 1/2). A
simulated judge flips each label with probability `judgeNoise`; a failed strict item ends the
episode. Turn reward R_t = sum of the weights of the items met at their step; episode reward
R = (1 / toolSteps) sum_t R_t (`checklist`), or 1 for success alone (`outcome`).
"""
from .common import JUDGE_STREAM, PAD, RM_STREAM, EpisodeBase
from .rng import Rng, f32, fork_seed, hash_uniform

SPECIALS = ["·", "<s>", "REQ", "=", "OK", "ERR"]
BOS, REQ, EQ, OK, ERR = 1, 2, 3, 4, 5
PLAN_TOOLS = ["RATE", "CONV", "BOOK", "CONFIRM"]
DISTRACTOR_NAMES = ["WEATHER", "NEWS", "MAPS", "MAIL", "CLOCK", "TAXI", "HOTEL", "STOCK"]
KINDS = ["c", "n", "x", "m", "k"]  # currency, amount, rate, money, code
CUR, AMT, RATEK, MONEY, CODE = 0, 1, 2, 3, 4


class Layout:
    def __init__(self, cfg):
        self.S, self.K, self.D = cfg["toolSteps"], cfg["toolValues"], cfg["distractors"]
        self.tool0 = len(SPECIALS)
        self.n_tools = self.S + self.D
        self.kind0 = self.tool0 + self.n_tools
        self.vocab = SPECIALS + PLAN_TOOLS[: self.S] + DISTRACTOR_NAMES[: self.D] + [f"{k}{i}" for k in KINDS for i in range(self.K)]
        self.sig = [[CUR], [AMT, RATEK], [MONEY], [CODE]][: self.S]
        for d in range(self.D):
            self.sig.append([[CUR, AMT, MONEY, CODE][d % 4]])
        self.action_len = 3
        self.max_turns = self.S

    def tok(self, kind, i):
        return self.kind0 + kind * self.K + i

    def kind_of(self, t):
        return (t - self.kind0) // self.K if self.kind0 <= t < self.kind0 + 5 * self.K else -1

    def item_suffix(self, t, c):
        return "tool" if c == 0 else KINDS[self.sig[t][c - 1]]


def checklist(L, t, cur, amt, args, strict_args):
    """The reference checklist of plan turn t (CM2's components; `step` is the deciding action slot)."""
    name = PLAN_TOOLS[t]
    items = [{"id": f"{name}.tool", "focus": "tool call", "question": f"Is the call at turn {t} {name}?", "strict": True, "deps": [], "weight": 0.5, "step": 0}]
    src = [
        [f"prompt: requested currency c{cur}"],
        [f"prompt: requested amount n{amt}", f"turn 0 result: the rate of c{cur}"],
        ["turn 1 result: the converted amount"],
        ["turn 2 result: the booking code"],
    ][t]
    for j, a in enumerate(args):
        text = L.vocab[a]
        items.append({"id": f"{name}.{L.item_suffix(t, j + 1)}", "focus": "tool argument", "question": f"Is argument {j + 1} of {name} {text} ({src[j]})?", "strict": bool(strict_args), "deps": [0], "weight": 0.5 / len(args), "step": j + 1})
    return items


def sample_rows(cfg, batch_seed, iteration, prompts):
    L = Layout(cfg)
    K = L.K
    rng = Rng(batch_seed)
    rows = []
    for b in range(prompts):
        rate = [rng.int(K) for _ in range(K)]
        conv = [rng.int(K) for _ in range(K * K)]
        code = [rng.int(K) for _ in range(K)]
        cur = rng.int(K)
        amt = rng.int(K)
        x = rate[cur]
        m = conv[amt * K + x]
        k = code[m]
        correct = [[L.tok(CUR, cur)], [L.tok(AMT, amt), L.tok(RATEK, x)], [L.tok(MONEY, m)], [L.tok(CODE, k)]][: L.S]
        calls = [[PLAN_TOOLS[t]] + [L.vocab[a] for a in correct[t]] for t in range(L.S)]
        lists = [checklist(L, t, cur, amt, correct[t], cfg["strictArgs"]) for t in range(L.S)]
        rows.append({"index": b, "question": ["REQ", f"n{amt}", f"c{cur}"], "answer": calls, "tables": {"rate": rate, "conv": conv, "code": code, "currency": cur, "amount": amt, "checklists": lists}})
    keys = {"rm_seed": fork_seed(batch_seed, RM_STREAM), "judge_seed": Rng(fork_seed(batch_seed, JUDGE_STREAM)).next_u32()}
    for r in rows:
        r["keys"] = keys
    return rows


def label_step_reward(items, label, s, c):
    """CM2 Eq. 2 for labels decided at each item's step: 1 when item c becomes met at step s."""
    item = items[c]
    if label[c] != 1 or item["step"] != s:
        return 0
    for d in item["deps"]:
        if label[d] != 1 or not items[d]["step"] < s:
            return 0
    return 1


def label_rewards(items, label):
    """Step rewards [3] (float32 sums, item by item) and the turn reward (their float64 sum)."""
    steps = [0.0, 0.0, 0.0]
    R = 0.0
    for s in range(3):
        for c in range(len(items)):
            r = items[c]["weight"] * label_step_reward(items, label, s, c)
            steps[s] = f32(steps[s] + r)
            R += r
    return steps, R


class Episode(EpisodeBase):
    def __init__(self, row, cfg, n):
        super().__init__(row, cfg, n, (0, 1))
        self.L = Layout(cfg)
        t = row["tables"]
        L = self.L
        x = t["rate"][t["currency"]]
        m = t["conv"][t["amount"] * L.K + x]
        k = t["code"][m]
        self.correct = [[L.tok(CUR, t["currency"])], [L.tok(AMT, t["amount"]), L.tok(RATEK, x)], [L.tok(MONEY, m)], [L.tok(CODE, k)]][: L.S]
        self.turn_rewards = [0.0] * L.S
        self.turn_rewards_true = [0.0] * L.S
        self.step_rewards = [0.0] * (L.S * 3)
        self.all_met = True

    def run(self, t, a0, a1):
        L, tb = self.L, self.row["tables"]
        K = L.K
        idx = lambda tok: (tok - L.kind0) % K
        if t >= L.S:
            return ERR
        if t == 0:
            return L.tok(RATEK, tb["rate"][idx(a0)])
        if t == 1:
            return L.tok(MONEY, tb["conv"][idx(a0) * K + idx(a1)])
        if t == 2:
            return L.tok(CODE, tb["code"][idx(a0)])
        return OK if a0 == self.correct[3][0] else ERR

    def step(self, turn, a):
        L = self.L
        if self.done:
            return [PAD, PAD], [0, 0, 0]
        t = a[0] - L.tool0
        ok = 0 <= t < L.n_tools and all(L.kind_of(a[1 + j]) == kind for j, kind in enumerate(L.sig[t]))
        arity = len(L.sig[t]) if ok else 2
        a0 = a[1]
        a1 = a[2] if arity > 1 else -1
        mask = [1, 1, 1 if arity > 1 else 0]
        result = self.run(t, a0, a1) if ok else ERR
        items = self.row["tables"]["checklists"][turn]
        ref = self.correct[turn]
        C = len(items)
        true = [0] * C
        true[0] = 1 if ok and t == turn else 0
        for c in range(1, C):
            true[c] = 1 if true[0] and (a0 if c == 1 else a1 if c == 2 else -1) == ref[c - 1] else 0
        noise = self.cfg["judgeNoise"]
        judged = [(1 - true[c]) if noise > 0 and hash_uniform(self.row["keys"]["judge_seed"], self.n, turn, c) < noise else true[c] for c in range(C)]
        steps, R = label_rewards(items, judged)
        _, R_true = label_rewards(items, true)
        self.step_rewards[turn * 3 : turn * 3 + 3] = steps
        self.turn_rewards[turn] = f32(R)
        self.turn_rewards_true[turn] = f32(R_true)
        strict_fail = False
        for c in range(C):
            if true[c] == 0:
                self.all_met = False
            if items[c]["strict"] and not judged[c]:
                strict_fail = True
        if strict_fail or turn == L.S - 1:
            self.end(not strict_fail and turn == L.S - 1 and self.all_met)
        return [EQ, result], mask

    def end(self, solved):
        S = self.L.S
        R = sum(self.turn_rewards) / S
        R_true = sum(self.turn_rewards_true) / S
        if self.cfg["toolReward"] == "outcome":
            self.finish(1 if solved else 0, solved)
        else:
            self.finish(R_true, solved, R)

    def end_unanswered(self):
        """A rollout that stopped before the plan's last call: the turns it took, unsolved."""
        self.end(False)
