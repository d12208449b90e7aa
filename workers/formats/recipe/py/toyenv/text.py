"""The text face of a toy episode: what an LLM reads and writes.

The model answers each turn with one command line (the last non-empty line of its reply), whose
words are the toy's tokens, e.g. `SEARCH e1 a0`, `ANSWER v3`, `CONV n2 x1`, `s0 s3 s1`. The
environment answers with its observation tokens as words (`RES v5`, `= m2`, `ok @X`, `✓`). A
word outside the vocabulary, or more words than an action holds, makes the action malformed
(the toy's own rule for an action outside its grammar applies).
"""
import zlib

from . import layout, make_episode

TOOL_CALLS = [
    "`RATE <currency>` (answers `= <rate>`)",
    "`CONV <amount> <rate>` (answers `= <money>`)",
    "`BOOK <money>` (answers `= <code>`)",
    "`CONFIRM <code>` (answers `= OK` or `= ERR`)",
]


def task_rules(config):
    """The system prompt: the task's commands, as far as this config's vocabulary has them."""
    env = config["env"]
    task = config["task"]
    if task == "search":
        hops = (
            " A question `Q e r1 a` asks attribute a of the entity that is relation r1 of e; "
            "`SEARCH <entity> <relation>` answers `<entity> ;`."
            if env["hops"] > 1
            else ""
        )
        return (
            "Answer the question by searching a knowledge base. Each turn, reply with exactly one command line: "
            "`SEARCH <entity> <attribute>` (the engine answers `RES <value>`) or `ANSWER <value>` to end. "
            "The engine sometimes returns a wrong document." + hops
        )
    if task == "tools":
        S = env["toolSteps"]
        return (
            "Fulfil the request `REQ <amount> <currency>` with tool calls, one per turn, in this order: "
            + ", ".join(TOOL_CALLS[:S])
            + ". Reply each turn with exactly one call line."
        )
    if task == "roles":
        return (
            "Two roles share you. As the planner (`@P`), first tell the executor which fact to look up: "
            "`TELL <entity> <attribute>`; when the value comes back (`@P <value>`), reply `ANSWER <value>`. "
            "As the executor (`@X`), look up a fact: `LOOK <entity> <attribute>`. Reply with exactly one command line."
        )
    return "Reply with the hidden sequence of symbols for the task id, as one line of symbols such as `s0 s2 s1`."


def messages(config, row):
    """The chat prompt of a row: the task's rules, then the question."""
    words = " ".join(row["question"])
    return [{"role": "system", "content": task_rules(config)}, {"role": "user", "content": words}]


def rollout_key(instance_id):
    """A framework's rollout id as the toy's rollout key (what keys its noise)."""
    return zlib.crc32(str(instance_id).encode("utf-8"))


class TextEpisode:
    """One rollout driven by text: act(reply) -> observation text."""

    def __init__(self, config, row, n):
        self.config = config
        self.layout = layout(config)
        self.ids = {w: i for i, w in enumerate(self.layout.vocab)}
        self.episode = make_episode(config, row, n)
        self.turn = 0

    @property
    def done(self):
        return self.episode.done

    def parse(self, reply):
        lines = [ln.strip() for ln in str(reply).splitlines() if ln.strip()]
        words = lines[-1].strip("`").split() if lines else []
        L = self.layout.action_len
        tokens = [self.ids.get(w, -1) for w in words[:L]] + [0] * max(0, L - len(words))
        if len(words) > L and tokens:
            tokens[0] = -1
        return tokens

    def act(self, reply):
        """Applies one turn's reply; returns the observation as text ('' when the episode ended silently)."""
        if self.done:
            raise ValueError("the episode has ended; no more turns")
        obs, _ = self.episode.step(self.turn, self.parse(reply))
        self.turn += 1
        return " ".join(self.layout.vocab[t] for t in obs if t != 0)

    def reward(self):
        """The training reward; a rollout that stopped early is ended as the toy ends an unanswered one."""
        if not self.done:
            self.episode.end_unanswered()
        return self.episode.reward
