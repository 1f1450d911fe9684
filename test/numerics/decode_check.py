#!/usr/bin/env python3
"""What the numeric matrix cannot show of a split-KV decode kernel (num_splits), through its C
entry point (ctypes, DLPack tensors), as a host calls it:

- determinism: the same call on 1, 2, 3, 8 and 16 threads gives bit-identical out and lse (the
  work of a split does not depend on the threads, and the merge adds splits in order);
- splits: num_splits = 1 and 7 agree within the dtype's tolerance (they round differently);
- a KV length of 0: out = 0 and lse = -inf, the reference's rule for rows with nothing to
  attend to, with no kernel phase run;
- hostile shapes: seq_q beyond the kernel's bound and a k that does not match q's batch are
  errors (ATTNC_ERR_LIMIT, ATTNC_ERR_SHAPE) naming the tensor, with the outputs untouched.

Prints PASS / FAIL lines and exits non-zero on a failure.
"""
import ctypes
import sys

import numpy as np

import device_run
from attnc._abi import K_DL_BFLOAT, K_DL_FLOAT, Options

ERR_SHAPE, ERR_LIMIT = 4, 6
HEADS, KV_HEADS, DIM, MAX_Q = 8, 2, 64, 4
TOLERANCE = {"f32": (2e-5, 2e-6), "bf16": (2e-2, 8e-3)}

SPEC = """attn.kernel @{name} {{
  attn.attention {{num_heads = {heads}, num_kv_heads = {kv}, head_dim = {dim}, dtype = {dtype},
                  layout = bhsd, mask = #attn.causal<bottom_right>, max_seq = [{max_q}, 100000],
                  outputs = [out, lse], num_splits = {splits}}}
}}
"""


def build(args):
    """Compiles two kernels, num_splits 1 and 7, into one shared object; returns it loaded."""
    specs = "".join(SPEC.format(name="split%d" % splits, heads=HEADS, kv=KV_HEADS, dim=DIM,
                                dtype=args.dtype, max_q=MAX_Q, splits=splits)
                    for splits in (1, 7))
    return device_run.build_so(args.attnc, specs, args.target, args.work, "decode")


def tensor(array, dtype):
    """A DLTensor over `array`: bf16 bits (uint16) for bf16, float32 otherwise."""
    bf16 = dtype == "bf16" and array.dtype == np.uint16
    return device_run.tensor(array, K_DL_BFLOAT if bf16 else K_DL_FLOAT, 16 if bf16 else 32)


def inputs(dtype, batch, seq_q, seq_kv, seed=3):
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(-1, 1, (batch, h, s, DIM)).astype(np.float32)
              for h, s in ((HEADS, seq_q), (KV_HEADS, seq_kv), (KV_HEADS, seq_kv))]
    if dtype == "bf16":  # bf16 bit patterns, truncated: the values are what they are
        arrays = [(a.view(np.uint32) >> 16).astype(np.uint16) for a in arrays]
    return arrays


def call(entry, dtype, q, k, v, threads, out_q=None):
    """(status, out, lse) of one call on `threads` threads."""
    shape = q.shape if out_q is None else out_q
    out = np.full(shape, 7, q.dtype)  # raw 7s: what an error must leave untouched
    lse = np.full(shape[:3], 7, np.float32)
    ts = [tensor(a, dtype) for a in (q, k, v, out)] + [tensor(lse, "f32")]
    rc = entry(*(ctypes.byref(t) for t in ts), ctypes.byref(Options(threads, None)))
    return rc, out, lse


def as_f32(array):
    if array.dtype == np.uint16:
        return (array.astype(np.uint32) << 16).view(np.float32)
    return array


def check(name, ok, detail=""):
    print("%s %-34s %s" % ("PASS" if ok else "FAIL", name, detail))
    return ok


def main():
    parser = device_run.check_parser(__doc__)
    parser.add_argument("--dtype", choices=sorted(TOLERANCE), default="f32")
    args = parser.parse_args()
    library = build(args)
    entries = {n: getattr(library, "split%d" % n) for n in (1, 7)}
    ok = True

    q, k, v = inputs(args.dtype, batch=2, seq_q=MAX_Q, seq_kv=5000)
    runs = {t: call(entries[7], args.dtype, q, k, v, t) for t in (1, 2, 3, 8, 16)}
    same = all(rc == 0 and np.array_equal(out.view(np.uint8), runs[1][1].view(np.uint8)) and
               np.array_equal(lse.view(np.uint8), runs[1][2].view(np.uint8))
               for rc, out, lse in runs.values())
    ok &= check("bit-identical over 1-16 threads", same, "(num_splits = 7, seq_kv 5000)")

    rc, out1, lse1 = call(entries[1], args.dtype, q, k, v, 2)
    rtol, atol = TOLERANCE[args.dtype]
    close = rc == 0 and np.allclose(as_f32(out1), as_f32(runs[1][1]), rtol, atol) and \
        np.allclose(lse1, runs[1][2], rtol, atol)
    ok &= check("num_splits 1 and 7 agree", close, "(rtol %g, atol %g)" % (rtol, atol))

    q0, k0, v0 = inputs(args.dtype, batch=1, seq_q=2, seq_kv=0)
    rc, out, lse = call(entries[7], args.dtype, q0, k0, v0, 2)
    ok &= check("seq_kv 0: out 0, lse -inf",
                rc == 0 and not as_f32(out).any() and np.all(np.isneginf(lse)))

    qx, kx, vx = inputs(args.dtype, batch=1, seq_q=MAX_Q + 1, seq_kv=64)
    rc, out, _ = call(entries[7], args.dtype, qx, kx, vx, 2)
    message = library.attnc_last_error().decode()
    ok &= check("seq_q beyond max_seq: LIMIT", rc == ERR_LIMIT and "max_seq_q = 4" in message
                and np.all(out == 7), message)

    rc, out, _ = call(entries[7], args.dtype, q, k[:1], v[:1], 2)
    message = library.attnc_last_error().decode()
    ok &= check("k batch not q's: SHAPE", rc == ERR_SHAPE and message.find("k has shape") >= 0
                and np.all(out == 7), message)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
