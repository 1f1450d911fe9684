"""PyTorch's CPU attention as two peers (torch from benchmarks/peers/install.sh):

torch-sdpa   torch.nn.functional.scaled_dot_product_attention, the eager call most users make.
               dense           no mask.
               causal, gqa     is_causal=True; gqa passes enable_gqa=True (k/v are
                               repeat_interleave'd once in prepare on a torch without it).
               swa*, bigbird   an explicit boolean attn_mask [seq, seq] built in prepare: the
                               only way to give SDPA any other mask, and what a user of SDPA
                               does. It costs seq^2 bytes, and SDPA turns it into an additive
                               float mask (another 4 * seq^2 bytes) inside every call, which is
                               timed as part of the call since every user pays it too. Over
                               MASK_BYTES_LIMIT of boolean mask the workload is Unsupported.
torch-flex   FlexAttention: flex_attention compiled by torch.compile (inductor's C++ flex
             template on CPU) with a BlockMask from create_block_mask, whose mask_mod is the
             variant's predicate on (q_idx, kv_idx). Blocks of BLOCK_SIZE = 128 (flex's default;
             the CPU kernel also uses it as its q / kv tile), 64 for bigbird so that the
             BlockMask is BigBird's 64-token block layout exactly (no partial blocks); dense
             passes no BlockMask; gqa passes enable_gqa=True (no repeated k/v).

Threads: prepare and every fn() call set torch.set_num_threads(w.threads). Inductor bakes the
thread count into the C++ kernels it generates (`#pragma omp parallel num_threads(N)`); dynamo
guards on it (GLOBAL_STATE num_threads) and recompiles when it changes. Every guard failure
(another thread count, shape or mask_mod) is a recompilation of the same code object, and after
torch._dynamo.config.recompile_limit (8) of them dynamo falls back (logging one warning) to eager
flex_attention, which on CPU is the unfused math path. So each flex prepare compiles its own
copy of the call (a fresh code object: its own dynamo cache, one entry, nothing shared with
other workloads), as it does for create_block_mask from COMPILE_MASK_FROM_SEQ on.
Compiling takes about 5 s per workload here (about 10 s for the first in a process, much less
when inductor's on-disk cache in /tmp/torchinductor_$USER already has the kernel).

Timed call: inputs are converted once in prepare (torch.from_numpy: zero-copy views of the
numpy arrays); fn() runs the attention under torch.no_grad() and returns out.numpy(), a
zero-copy view of the output tensor, so no conversion is timed.

bf16 workloads: q, k, v are converted to torch.bfloat16 in prepare (exact: the harness's inputs
are bf16 numbers), the masks are the same as in f32, and fn() returns the bf16 output tensor
itself (numpy has no bf16; the harness converts it outside the timed call). SDPA's CPU flash
kernel and inductor's flex template take bf16 with float32 accumulation.
"""
import itertools
import math
import types

import numpy as np

from peers.base import Peer, Unsupported

try:
    import torch
    import torch.nn.functional as F
except ImportError as e:  # make() reports it
    torch = F = None
    _IMPORT_ERROR = e

MASK_BYTES_LIMIT = 2 << 30      # SDPA's boolean [seq, seq] mask
FLEX_BLOCK = 128                # create_block_mask's default BLOCK_SIZE
BIGBIRD_BLOCK = 64              # Workload.block_layout's block
COMPILE_MASK_FROM_SEQ = 16384   # compile create_block_mask from here on: the eager one
                                # materializes [seq, seq] int64 intermediates (2.7 GiB peak at
                                # 16384; compiled: 0.3 GiB and about 6 s more)


def _set_threads(n):
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)


def _tensors(w, q, k, v):
    """q, k, v as torch tensors of w.dtype (float32: zero-copy views)."""
    tensors = tuple(torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32)) for a in (q, k, v))
    if w.dtype == "bf16":
        tensors = tuple(t.to(torch.bfloat16).contiguous() for t in tensors)
    elif w.dtype != "f32":
        raise Unsupported("dtype %s is not benchmarked" % w.dtype)
    return tensors


def _result(w):
    """What fn() returns of the output tensor: a zero-copy numpy view for float32, the tensor
    itself for bf16 (numpy has no bfloat16)."""
    if w.dtype == "f32":
        return lambda out: out.numpy()
    return lambda out: out


def _check_heads(w):
    if w.heads % w.kv_heads:
        raise Unsupported("heads (%d) not a multiple of kv_heads (%d)" % (w.heads, w.kv_heads))


class SdpaPeer(Peer):
    name = "torch-sdpa"

    def prepare(self, w, q, k, v):
        _check_heads(w)
        _set_threads(w.threads)
        q, k, v = _tensors(w, q, k, v)
        result = _result(w)
        kwargs = {"scale": 1.0 / math.sqrt(w.head_dim)}
        if w.heads != w.kv_heads:
            if _has_enable_gqa():
                kwargs["enable_gqa"] = True
            else:  # older torch: repeat once here, not in the timed call
                g = w.heads // w.kv_heads
                k, v = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)
        if w.variant in ("causal", "gqa"):
            kwargs["is_causal"] = True
        elif w.variant != "dense":
            # The path a user of SDPA takes for any other mask: a boolean [seq, seq] attn_mask
            # (True = attend), seq^2 bytes, broadcast over batch and heads.
            if w.seq * w.seq > MASK_BYTES_LIMIT:
                raise Unsupported("SDPA needs an explicit boolean [seq, seq] attn_mask for %s: "
                                  "%d MiB > %d MiB" % (w.variant, w.seq * w.seq >> 20,
                                                       MASK_BYTES_LIMIT >> 20))
            kwargs["attn_mask"] = torch.from_numpy(w.keep_matrix())
        threads = w.threads

        def fn():
            _set_threads(threads)
            with torch.no_grad():
                return result(F.scaled_dot_product_attention(q, k, v, **kwargs))
        return fn


class FlexPeer(Peer):
    name = "torch-flex"

    def prepare(self, w, q, k, v):
        _check_heads(w)
        try:
            from torch.nn.attention.flex_attention import create_block_mask, flex_attention
        except ImportError as e:
            raise Unsupported("torch %s has no FlexAttention: %s" % (torch.__version__, e))
        _set_threads(w.threads)
        q, k, v = _tensors(w, q, k, v)
        result = _result(w)
        mask_mod, block = _mask_mod(w)
        block_mask = None
        if mask_mod is not None:
            make_mask = create_block_mask
            if w.seq >= COMPILE_MASK_FROM_SEQ:
                make_mask = torch.compile(_fresh(create_block_mask), fullgraph=True)
            block_mask = make_mask(mask_mod, None, None, w.seq, w.seq, device="cpu",
                                   BLOCK_SIZE=block)
        gqa = w.heads != w.kv_heads
        scale = 1.0 / math.sqrt(w.head_dim)

        def call(q, k, v, block_mask):
            return flex_attention(q, k, v, block_mask=block_mask, scale=scale, enable_gqa=gqa)
        compiled = torch.compile(_fresh(call), fullgraph=True, dynamic=False)
        try:
            with torch.no_grad():
                compiled(q, k, v, block_mask)  # compiles; the warm-up call
        except Exception as e:
            raise Unsupported("torch.compile(flex_attention) on CPU failed: %s: %s"
                              % (type(e).__name__, e))
        threads = w.threads

        def fn():
            _set_threads(threads)
            with torch.no_grad():
                return result(compiled(q, k, v, block_mask))
        return fn


_copies = itertools.count(1)


def _fresh(fn):
    """A copy of fn with its own code object, hence its own dynamo cache."""
    code = fn.__code__.replace(co_name="%s_%d" % (fn.__name__, next(_copies)))
    copy = types.FunctionType(code, fn.__globals__, code.co_name, fn.__defaults__,
                              fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    return copy


def _mask_mod(w):
    """(mask_mod or None for dense, BLOCK_SIZE) of a workload."""
    if w.variant == "dense":
        return None, FLEX_BLOCK
    if w.variant in ("causal", "gqa"):
        def causal(b, h, q_idx, kv_idx):
            return kv_idx <= q_idx
        return causal, FLEX_BLOCK
    if w.variant in ("swa256", "swa1024"):
        window = w.window()

        def sliding_window(b, h, q_idx, kv_idx):
            return (kv_idx <= q_idx) & (q_idx - kv_idx < window)
        return sliding_window, FLEX_BLOCK
    if w.variant == "bigbird":
        layout = torch.from_numpy(np.ascontiguousarray(w.block_layout(BIGBIRD_BLOCK)))

        def bigbird(b, h, q_idx, kv_idx):
            return layout[q_idx // BIGBIRD_BLOCK, kv_idx // BIGBIRD_BLOCK]
        return bigbird, BIGBIRD_BLOCK
    raise Unsupported("unknown variant %r" % w.variant)


def _has_enable_gqa():
    return "enable_gqa" in (F.scaled_dot_product_attention.__doc__ or "")


def make():
    if torch is None:
        raise _IMPORT_ERROR
    return [SdpaPeer(), FlexPeer()]
