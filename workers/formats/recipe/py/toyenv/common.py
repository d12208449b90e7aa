"""What every task shares: the noisy reward-model channel and the end of an episode.

An episode is one row of the data (one task instance) rolled out with a rollout key `n`: the
playground's trajectory index within its batch. Every per-step random draw is keyed by (n, turn),
so what a rollout observes depends only on its row, its key and its own actions.
"""
from .rng import f32, normal_at

PAD = 0
# Labels of the streams forked from a batch's generator (workers/core/envs/*.ts).
RM_STREAM = 0x524D
NOISE_STREAM = 0x2E5
JUDGE_STREAM = 0x10D9E
TARGET_STREAM = 0x5E9


def reward_model_std(r, lo, hi, rm_noise, rm_floor):
    """Std of the simulated reward model's error at true reward r (PF-PPO's noisy channel)."""
    if rm_noise <= 0:
        return 0
    u = min(1, max(0, (r - lo) / (hi - lo))) if hi > lo else 0
    return rm_noise * (rm_floor + (1 - rm_floor) * 4 * u * (1 - u))


class EpisodeBase:
    """Bookkeeping of one rollout: done, the training reward, the true reward, success."""

    def __init__(self, row, env_cfg, n, reward_range):
        self.row = row
        self.cfg = env_cfg
        self.n = n
        self.done = False
        self.reward = 0.0
        self.reward_true = 0.0
        self.success = False
        self.reward_range = reward_range

    def finish(self, r_true, solved, observed=None):
        if observed is None:
            observed = r_true
        self.done = True
        self.reward_true = f32(r_true)
        rm_noise = self.cfg["rmNoise"]
        if rm_noise > 0:
            lo, hi = self.reward_range
            xi = normal_at(self.row["keys"]["rm_seed"], self.n)
            self.reward = f32(observed + reward_model_std(r_true, lo, hi, rm_noise, self.cfg["rmNoiseFloor"]) * xi)
        else:
            self.reward = f32(observed)
        self.success = bool(solved)
