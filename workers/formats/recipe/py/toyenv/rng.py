"""Seeded randomness, bit for bit as the playground's workers/core/rng.ts (32-bit integer math).

- create_rng(seed): mulberry32, the sequential generator that samples the episodes.
- hash_uniform(seed, a, b, c): a counter-based uniform from PCG hashes, for per-(rollout, turn) noise.
"""
import math
import struct

M32 = 0xFFFFFFFF


def imul(a, b):
    """Math.imul: the low 32 bits of the product (as an unsigned int)."""
    return ((a & M32) * (b & M32)) & M32


def f32(x):
    """Rounds a float to float32, as a Float32Array store does."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def pcg_hash(v):
    """PCG-RXS-M-XS 32-bit hash (Jarzynski & Olano 2020)."""
    state = (imul(v, 747796405) + 2891336453) & M32
    word = imul(((state >> ((state >> 28) + 4)) ^ state) & M32, 277803737)
    return ((word >> 22) ^ word) & M32


def hash_uniform(seed, a, b, c):
    """Uniform in [0, 1) with 24 bits."""
    h = pcg_hash((seed & M32) ^ 0x9E3779B9)
    h = pcg_hash((h + (a & M32)) & M32)
    h = pcg_hash((h + (b & M32)) & M32)
    h = pcg_hash((h + (c & M32)) & M32)
    return (h >> 8) * (1 / 16777216)


MULBERRY_STEP = 0x6D2B79F5


def mulberry_u32(state):
    """mulberry32's output word for the state it has just advanced to."""
    t = state
    t = imul(t ^ (t >> 15), t | 1)
    t = t ^ ((t + imul(t ^ (t >> 7), t | 61)) & M32)
    return (t ^ (t >> 14)) & M32


def mulberry_draw(seed, k):
    """The k-th (0-based) uniform of create_rng(seed), without drawing the ones before it."""
    return mulberry_u32((seed + (k + 1) * MULBERRY_STEP) & M32) / 4294967296


class Rng:
    """mulberry32 with the playground's next / int / normal / fork."""

    def __init__(self, seed):
        self.seed = seed & M32
        self.state = seed & M32

    def next_u32(self):
        self.state = (self.state + MULBERRY_STEP) & M32
        return mulberry_u32(self.state)

    def next(self):
        return self.next_u32() / 4294967296

    def int(self, n):
        return math.floor(self.next() * n)

    def normal(self):
        u = max(self.next(), 1e-12)
        v = self.next()
        return math.sqrt(-2 * math.log(u)) * math.cos(2 * math.pi * v)

    def fork(self, label):
        return Rng(fork_seed(self.seed, label))


def fork_seed(seed, label):
    """The seed of create_rng(seed).fork(label): independent of how far the parent has drawn."""
    return pcg_hash(((seed & M32) ^ pcg_hash(label & M32)) & M32)


def create_rng(seed):
    return Rng(seed)


def normal_at(seed, n):
    """The n-th standard normal of create_rng(seed) (draws 2n and 2n + 1), as the reward-model noise reads it."""
    u = max(mulberry_draw(seed, 2 * n), 1e-12)
    v = mulberry_draw(seed, 2 * n + 1)
    return math.sqrt(-2 * math.log(u)) * math.cos(2 * math.pi * v)
