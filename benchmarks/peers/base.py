"""The workloads of the benchmark and the interface every peer implements.

A peer module exposes make() -> list[Peer] and raises ImportError when its package is not
installed. Peer.prepare(workload, q, k, v) does everything that should not be timed
(compilation, masks, conversions) and returns fn() -> out, the call that is timed.
"""
import dataclasses

import numpy as np

VARIANTS = ("dense", "causal", "swa256", "swa1024", "bigbird", "gqa")
BIGBIRD = {"block": 64, "window": 1, "global": 1, "random": 2, "seed": 42}
MASK64 = (1 << 64) - 1


class Unsupported(Exception):
    """Raised by Peer.prepare with the reason a peer cannot run a workload."""


def splitmix64(x):
    """BigBird's random-block draw, exactly as attnc defines it (BigBirdMaskAttr)."""
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


@dataclasses.dataclass(frozen=True)
class Workload:
    variant: str
    batch: int
    heads: int
    kv_heads: int
    seq: int
    head_dim: int
    threads: int

    @property
    def name(self):
        return "%s h%d/%d d%d s%d t%d" % (self.variant, self.heads, self.kv_heads,
                                          self.head_dim, self.seq, self.threads)

    def window(self):
        return {"swa256": 256, "swa1024": 1024}.get(self.variant)

    def block_layout(self, block=BIGBIRD["block"]):
        """BigBird's kept (query block, key block) pairs, as attnc's #attn.bigbird."""
        assert self.variant == "bigbird" and block == BIGBIRD["block"]
        n = -(-self.seq // block)
        qb, kb = np.arange(n)[:, None], np.arange(n)[None, :]
        g, r = BIGBIRD["global"], BIGBIRD["random"]
        keep = (np.abs(qb - kb) <= BIGBIRD["window"]) | (qb < g) | (kb < g)
        for row in range(n):
            for i in range(r):
                keep[row, splitmix64(BIGBIRD["seed"] + row * r + i) % n] = True
        return keep

    def keep_matrix(self):
        """Boolean [seq, seq], True = attend. O(seq^2): for masks of moderate size."""
        i, j = np.arange(self.seq)[:, None], np.arange(self.seq)[None, :]
        if self.variant == "dense":
            return np.ones((self.seq, self.seq), bool)
        if self.variant in ("causal", "gqa"):
            return j <= i
        if self.window():
            return (j <= i) & (j > i - self.window())
        block = BIGBIRD["block"]
        return self.block_layout()[i // block, j // block]

    def kept_pairs(self):
        """(query, key) pairs the mask keeps, per (batch, head), without an O(seq^2) matrix."""
        s = self.seq
        if self.variant == "dense":
            return s * s
        if self.variant in ("causal", "gqa"):
            return s * (s + 1) // 2
        if self.window():
            w = self.window()
            return sum(min(i + 1, w) for i in range(s))
        block = BIGBIRD["block"]
        sizes = np.minimum(block, s - np.arange(0, s, block))
        return int((self.block_layout() * np.outer(sizes, sizes)).sum())

    def useful_flops(self):
        """4 * head_dim per kept pair (two multiply-adds per element of QK^T and PV)."""
        return 4.0 * self.batch * self.heads * self.head_dim * self.kept_pairs()

    def spec(self):
        """The attnc spec of this workload."""
        masks = {
            "dense": "#attn.full",
            "causal": "#attn.causal<top_left>",
            "gqa": "#attn.causal<top_left>",
            "swa256": "#attn.sliding_window<left = 255, right = 0>",
            "swa1024": "#attn.sliding_window<left = 1023, right = 0>",
            "bigbird": "#attn.bigbird<block = %(block)d, window = %(window)d, global = "
                       "%(global)d, random = %(random)d, seed = %(seed)d>" % BIGBIRD,
        }
        name = "bench_%s_h%d_kv%d_d%d" % (self.variant, self.heads, self.kv_heads, self.head_dim)
        return name, ("attn.kernel @%s {\n  attn.attention {num_heads = %d, num_kv_heads = %d, "
                      "head_dim = %d, dtype = f32, layout = bhsd, mask = %s, outputs = [out]}\n}\n"
                      % (name, self.heads, self.kv_heads, self.head_dim, masks[self.variant]))


class Peer:
    name = "peer"

    def prepare(self, w, q, k, v):
        raise NotImplementedError
