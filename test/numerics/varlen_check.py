#!/usr/bin/env python3
"""What the numeric matrix (varlen.json) cannot show of a prefill kernel over packed
variable-length sequences (varlen = cu_seqlens), through its C entry point (ctypes, DLPack
tensors), as a host calls it:

- equal lengths: the packed kernel gives bit for bit the padded batch kernel's out and lse
  (the same kernel on bshd [batch, seq, heads, head_dim]);
- determinism: bit-identical out and lse on 1, 2, 3, 8 and 16 threads for mixed lengths 0 to
  700; a sequence without keys gives out 0 and lse -inf; rows past cu_seqlens_q[batch] are not
  written;
- hostile offsets: decreasing, past the packed tensor, negative, a batch unlike q's offsets',
  a sequence longer than max_seq, int64 offsets, missing offsets: each an error
  (ATTNC_ERR_INDEX, _SHAPE, _LIMIT, _DTYPE, _NULL) that names the offsets, with the outputs
  untouched (nothing was read through them);
- kv_cache = lengths (kv_lens [batch], FlashAttention's seqused_k): every key used = the
  kernel without kv_lens, bit for bit; fewer used keys = those keys packed alone, bit for bit;
  a count over its sequence's span or negative: ATTNC_ERR_INDEX naming both tensors.

Prints PASS / FAIL lines and exits non-zero on a failure.
"""
import ctypes
import sys

import numpy as np

import device_run
from attnc._abi import Options

ERR_NULL, ERR_DTYPE, ERR_SHAPE, ERR_LIMIT, ERR_INDEX = 1, 2, 4, 6, 11
HEADS, KV_HEADS, DIM = 8, 2, 64

SPEC = """attn.kernel @{name} {{
  attn.attention {{num_heads = {heads}, num_kv_heads = {kv}, head_dim = {dim}, dtype = f32,
                  layout = bshd, mask = #attn.causal<bottom_right>, {extra}
                  outputs = [out, lse]}}
}}
"""


def build(args):
    """Compiles the packed, the padded and a bounded packed kernel into one shared object;
    returns it loaded."""
    specs = "".join(SPEC.format(name=name, heads=HEADS, kv=KV_HEADS, dim=DIM, extra=extra)
                    for name, extra in (("packed", "varlen = cu_seqlens,"), ("padded", ""),
                                        ("bounded",
                                         "varlen = cu_seqlens, max_seq = [128, 256],"),
                                        ("used", "varlen = cu_seqlens, kv_cache = lengths,")))
    return device_run.build_so(args.attnc, specs, args.target, args.work, "varlen")


def call(entry, q, k, v, *offsets, threads=2):
    """(status, out, lse) of one call; out and lse start as 7s, what an error must leave.
    Packed calls (offsets given) have lse [heads, total_q], padded ones [batch, heads, seq_q]."""
    out = np.full(q.shape, 7, np.float32)
    lse_shape = (HEADS, q.shape[0]) if offsets else (q.shape[0], HEADS, q.shape[1])
    lse = np.full(lse_shape, 7, np.float32)
    arrays = [q, k, v, out, lse] + list(offsets)
    ts = [None if a is None else device_run.host_tensor(a) for a in arrays]
    refs = [None if t is None else ctypes.byref(t) for t in ts]
    rc = entry(*refs, ctypes.byref(Options(threads, None)))
    return rc, out, lse


def check(name, ok, detail=""):
    return device_run.report(name, ok, detail, 44)


def bits_equal(a, b):
    return np.array_equal(a.view(np.uint32), b.view(np.uint32))


def packed_inputs(q_lens, kv_lens, seed=11, spare_rows=0):
    """Packed q [total_q + spare_rows, heads, dim], k and v, and the int32 offsets."""
    rng = np.random.default_rng(seed)
    cu_q = np.concatenate([[0], np.cumsum(q_lens)]).astype(np.int32)
    cu_kv = np.concatenate([[0], np.cumsum(kv_lens)]).astype(np.int32)
    q = rng.uniform(-1, 1, (cu_q[-1] + spare_rows, HEADS, DIM)).astype(np.float32)
    k, v = (rng.uniform(-1, 1, (cu_kv[-1], KV_HEADS, DIM)).astype(np.float32) for _ in range(2))
    return q, k, v, cu_q, cu_kv


def main():
    args = device_run.check_parser(__doc__).parse_args()
    library = build(args)
    packed, padded, bounded = library.packed, library.padded, library.bounded
    ok = True

    batch, seq = 3, 200
    q, k, v, cu_q, cu_kv = packed_inputs([seq] * batch, [seq] * batch)
    rc, out, lse = call(packed, q, k, v, cu_q, cu_kv)
    rc0, out0, lse0 = call(padded, q.reshape(batch, seq, HEADS, DIM),
                           k.reshape(batch, seq, KV_HEADS, DIM),
                           v.reshape(batch, seq, KV_HEADS, DIM))
    ok &= check("equal lengths: packed = padded, bit for bit", rc == 0 and rc0 == 0 and
                bits_equal(out, out0.reshape(out.shape)) and
                bits_equal(lse, lse0.transpose(1, 0, 2).reshape(lse.shape)),
                "(batch %d, lengths %d)" % (batch, seq))

    q_lens, kv_lens = [0, 1, 700, 130, 64, 5], [3, 1, 700, 0, 640, 5]
    q, k, v, cu_q, cu_kv = packed_inputs(q_lens, kv_lens, spare_rows=4)
    runs = {t: call(packed, q, k, v, cu_q, cu_kv, threads=t) for t in (1, 2, 3, 8, 16)}
    rc, out, lse = runs[2]
    same = all(r == 0 and bits_equal(o, out) and bits_equal(s, lse) for r, o, s in runs.values())
    ok &= check("bit-identical over 1-16 threads", rc == 0 and same,
                "(q lengths %s, kv lengths %s)" % (q_lens, kv_lens))
    rows = slice(cu_q[3], cu_q[4])  # sequence 3 has queries but no keys
    ok &= check("no keys: out 0, lse -inf", not out[rows].any() and
                np.all(np.isneginf(lse[:, rows])))
    ok &= check("rows past cu_seqlens_q[batch] not written", np.all(out[cu_q[-1]:] == 7) and
                np.all(lse[:, cu_q[-1]:] == 7))
    q2, k2, v2, cu_q2, cu_kv2 = packed_inputs([3, 0, 5], [0, 0, 0], spare_rows=2)
    rc, out, lse = call(packed, q2, k2[:0], v2[:0], cu_q2, cu_kv2)
    ok &= check("no sequence has keys: its rows only", rc == 0 and not out[:8].any() and
                np.all(np.isneginf(lse[:, :8])) and np.all(out[8:] == 7) and
                np.all(lse[:, 8:] == 7))

    def refused(name, status, text, offsets, entry=packed, tensors=(q, k, v)):
        rc, out, _ = call(entry, *tensors, *offsets)
        message = library.attnc_last_error().decode()
        return check(name, rc == status and text in message and np.all(out == 7), message)

    bad = cu_q.copy()
    bad[3] = bad[2] - 1
    ok &= refused("decreasing offsets: INDEX", ERR_INDEX,
                  "cu_seqlens_q[2] = 1 and [3] = 0, but offsets must not decrease",
                  (bad, cu_kv))
    bad = cu_kv.copy()
    bad[-1] = k.shape[0] + 1
    ok &= refused("offset past total_kv: INDEX", ERR_INDEX,
                  "cu_seqlens_kv[6] = 1350, but its entries must lie in [0, total_kv] = "
                  "[0, 1349]", (cu_q, bad))
    bad = cu_q.copy()
    bad[0] = -1
    ok &= refused("negative offset: INDEX", ERR_INDEX, "cu_seqlens_q[0] = -1", (bad, cu_kv))
    ok &= refused("batch unlike q's offsets: SHAPE", ERR_SHAPE,
                  "cu_seqlens_kv has shape [6] but needs [7]", (cu_q, cu_kv[:-1]))
    short = packed_inputs([100, 129], [200, 200])
    ok &= refused("sequence over max_seq: LIMIT", ERR_LIMIT,
                  "cu_seqlens_q has a sequence of seq_q = 129 but the kernel was compiled for "
                  "at most max_seq_q = 128", short[3:], bounded, short[:3])
    ok &= refused("int64 offsets: DTYPE", ERR_DTYPE,
                  "cu_seqlens_q has dtype int64 but needs int32", (cu_q.astype(np.int64), cu_kv))
    ok &= refused("no offsets: NULL", ERR_NULL, "cu_seqlens_kv is NULL", (cu_q, None))
    return 0 if check_used(library, packed, library.used, refused) and ok else 1


def check_used(library, packed, used, refused):
    """kv_cache = lengths on packed sequences: kv_lens[b] keys of sequence b's span."""
    ok = True
    q_lens, kv_lens = [0, 1, 700, 130, 64, 5], [3, 1, 700, 0, 640, 5]
    q, k, v, cu_q, cu_kv = packed_inputs(q_lens, kv_lens)
    rc0, out0, lse0 = call(packed, q, k, v, cu_q, cu_kv)
    rc, out, lse = call(used, q, k, v, cu_q, cu_kv, np.array(kv_lens, np.int32))
    ok &= check("every key used = no kv_lens, bit for bit", rc0 == 0 and rc == 0 and
                bits_equal(out, out0) and bits_equal(lse, lse0))
    few = np.array([2, 0, 333, 0, 1, 5], np.int32)
    rc, out, lse = call(used, q, k, v, cu_q, cu_kv, few)
    # The same sequences with only their used keys packed, through the kernel without kv_lens.
    keep = np.concatenate([np.arange(cu_kv[b], cu_kv[b] + n) for b, n in enumerate(few)])
    cu_few = np.concatenate([[0], np.cumsum(few)]).astype(np.int32)
    rc0, out0, lse0 = call(packed, q, k[keep], v[keep], cu_q, cu_few)
    ok &= check("fewer keys used = those keys alone, bit for bit", rc == 0 and rc0 == 0 and
                bits_equal(out, out0) and bits_equal(lse, lse0), "(used %s)" % list(few))
    over = np.array(kv_lens, np.int32)
    over[4] += 1
    ok &= refused("used keys over the span: INDEX", ERR_INDEX,
                  "kv_lens[4] = 641, but sequence 4 has 640 rows in cu_seqlens_kv ([4] = 704, "
                  "[5] = 1344)", (cu_q, cu_kv, over), used, (q, k, v))
    over[4] = -1
    ok &= refused("negative used keys: INDEX", ERR_INDEX, "kv_lens[4] = -1", (cu_q, cu_kv, over),
                  used, (q, k, v))
    return ok


if __name__ == "__main__":
    sys.exit(main())
