"""The workloads of the benchmark and the interface every peer implements.

A peer module exposes make() -> list[Peer] and raises ImportError when its package is not
installed. Peer.prepare(workload, q, k, v) does everything that should not be timed
(compilation, masks, conversions) and returns fn() -> out, the call that is timed.

dtypes: a workload's q, k, v and out are all of w.dtype ("f32" or "bf16"; an lse would stay
f32). The harness hands prepare float32 numpy arrays in every case; for bf16 their values are
already bf16 numbers (round_bf16), so a peer's conversion to its own bf16 type (in prepare, not
timed) is exact and every peer computes the same problem. For bf16, fn() returns out in bf16,
as whatever the peer has: a torch tensor, an ml_dtypes.bfloat16 array, or a uint16 numpy array
of bf16 bit patterns; to_float32 reads any of them (outside the timed call).
"""
import dataclasses

import numpy as np

VARIANTS = ("dense", "causal", "swa256", "swa1024", "bigbird", "gqa")
BIGBIRD = {"block": 64, "window": 1, "global": 1, "random": 2, "seed": 42}
MASK64 = (1 << 64) - 1
DTYPES = ("f32", "bf16")


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
    dtype: str = "f32"  # of q, k, v and out (DTYPES); last, so older records still load

    @property
    def name(self):
        """e.g. "dense h8/8 d64 s4096 t2" (f32), "dense bf16 h8/8 d64 s4096 t2"."""
        return "%s%s h%d/%d d%d s%d t%d" % (self.variant, self.dtype_label(), self.heads,
                                            self.kv_heads, self.head_dim, self.seq, self.threads)

    def dtype_label(self):
        """"" for f32 (the names and labels from before dtypes), else " bf16"."""
        return "" if self.dtype == "f32" else " " + self.dtype

    def as_f32(self):
        """The same workload in float32 (whose reference a bf16 workload is checked against)."""
        return dataclasses.replace(self, dtype="f32")

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
        if self.dtype != "f32":
            name += "_" + self.dtype
        return name, ("attn.kernel @%s {\n  attn.attention {num_heads = %d, num_kv_heads = %d, "
                      "head_dim = %d, dtype = %s, layout = bhsd, mask = %s, outputs = [out]}\n}\n"
                      % (name, self.heads, self.kv_heads, self.head_dim, self.dtype,
                         masks[self.variant]))


def bf16_bits(a):
    """float32 array -> uint16 bf16 bit patterns, rounded to nearest even (finite inputs)."""
    bits = np.ascontiguousarray(a, np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_to_float32(bits):
    """uint16 bf16 bit patterns -> float32 (exact)."""
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


def aligned(array, alignment=64):
    """A copy of `array` whose data starts on a cache line, as PyTorch's CPU allocator and any
    tuned caller provide (NumPy's large arrays start 16 bytes into one: every 64-byte vector
    load of a row then spans two lines, costing attnc 3-4% at head_dim 64)."""
    raw = np.empty(array.nbytes + alignment, np.uint8)
    start = -raw.ctypes.data % alignment
    out = raw[start:start + array.nbytes].view(array.dtype).reshape(array.shape)
    out[...] = array
    return out


def round_bf16(a):
    """a rounded to the nearest bf16 numbers, as float32."""
    return bf16_to_float32(bf16_bits(a))


def to_float32(out):
    """A peer's output as a float32 numpy array: float32 / float16 arrays, torch tensors of any
    float dtype, ml_dtypes.bfloat16 arrays, uint16 arrays of bf16 bit patterns."""
    if hasattr(out, "detach") and hasattr(out, "float"):  # a torch tensor
        return out.detach().float().numpy()
    if isinstance(out, np.ndarray) and out.dtype == np.uint16:
        return bf16_to_float32(out)
    return np.asarray(out).astype(np.float32)


class Peer:
    name = "peer"

    def prepare(self, w, q, k, v):
        raise NotImplementedError
