#!/usr/bin/env python3
"""Checks how far a NaN or infinite input reaches in a CPU kernel (docs/Reliability.md).

attnc's kernels do not scan their inputs. A non-finite element of q, k or v stays contained:
every row it cannot reach keeps its finite-input value (the reference's, within the matrix
tolerance), and rows it reaches are non-finite where stated:
  - q[b, h, i, :] NaN or inf: row (b, h, i), non-finite, and no other;
  - k[b, g, j, :] NaN: the rows of the heads sharing kv head g that keep key j, non-finite
    (a NaN score is a NaN weight, as in PyTorch), and no other (--nan-key contained: at most
    those rows); infinite: at most those rows (a score of -inf is a weight of 0, +inf makes
    the row NaN);
  - v[b, g, j, :] NaN or inf: those rows, non-finite, and also the rows of those heads whose
    query tile visits the KV tile of key j while masking key j (their weight for j is 0, but
    0 x NaN is NaN, as in FlashAttention and PyTorch's SDPA; the reference skips masked keys,
    so there the kernel and the reference differ).
The check compiles a causal GQA spec (seq 150, block 64: rows 64-127 visit the tile of key 70
and mask it for rows 64-69), poisons one element at a time, runs the kernel through its C ABI
and asserts each rule. Exit status 0 when every rule holds.
"""
import argparse
import ctypes
import os
import sys

import numpy as np

from device_run import call_f32, compare, run_tool as run

SPEC = """attn.kernel @nonfinite {
  attn.attention {num_heads = 4, num_kv_heads = 2, head_dim = 16, dtype = f32, layout = bhsd,
                  mask = #attn.causal<top_left>, outputs = [out, lse]}
}
"""
SEQ, BLOCK, RTOL, ATOL = 150, 64, 2e-5, 2e-6


def call(entry, q, k, v):
    return tuple(a.astype(np.float64) for a in call_f32(entry, q, k, v))


def rows_keep(j):
    """Rows of a causal top-left mask that keep key j."""
    return np.arange(SEQ) >= j


def check(name, got, ref, poisoned, must_be_nonfinite=True):
    """poisoned: bool [batch, heads, seq] of the rows the input reaches (non-finite if
    must_be_nonfinite); every other row must match the reference."""
    out, lse = got
    bad_rows = ~np.isfinite(out).all(axis=3) | ~np.isfinite(lse)
    ok = np.array_equal(bad_rows, poisoned) if must_be_nonfinite else \
        not (bad_rows & ~poisoned).any()
    print("%s: %d rows non-finite, %s %d: %s"
          % (name, int(bad_rows.sum()), "expected" if must_be_nonfinite else "at most",
             int(poisoned.sum()), "ok" if ok else "MISMATCH"))
    keep = ~poisoned
    ok = compare(name + " other rows out", out[keep], ref[0][keep], RTOL, ATOL) and ok
    return compare(name + " other rows lse", lse[keep], ref[1][keep], RTOL, ATOL) and ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attnc", required=True)
    parser.add_argument("--attnc-run", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--target", default="x86-64-avx2")
    parser.add_argument("--backend", default="mlir")
    parser.add_argument("--nan-key", choices=["nan-rows", "contained"], default="nan-rows",
                        help="a NaN key: the rows that keep it are NaN (the mlir backend), "
                             "or only contained to them (the Halide backend)")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    spec, so = os.path.join(args.work, "nonfinite.mlir"), os.path.join(args.work, "k.so")
    with open(spec, "w") as f:
        f.write(SPEC)
    # BLOCK pinned: which rows a NaN in v reaches depends on the query tile.
    run([args.attnc, spec, "--backend", args.backend, "--target", args.target, "--emit=so",
         "--schedule", "block_q=%d" % BLOCK, "-o", so])
    ref_dir = os.path.join(args.work, "ref")
    run([args.attnc_run, spec, "--reference", "--seed", "7", "--seq-q", str(SEQ), "-o",
         ref_dir])
    load = lambda n: np.ascontiguousarray(np.load(os.path.join(ref_dir, n + ".npy")))
    q, k, v = load("q"), load("k"), load("v")
    ref = (load("out").astype(np.float64), load("lse").astype(np.float64))
    entry = getattr(ctypes.CDLL(os.path.abspath(so)), "nonfinite")
    entry.restype = ctypes.c_int
    ok = check("finite inputs", call(entry, q, k, v), ref, np.zeros(ref[1].shape, bool))
    heads_of = {0: [0, 1], 1: [2, 3]}  # query heads sharing each kv head
    for value in (np.nan, np.inf):
        qp = q.copy()
        qp[0, 2, 5, 3] = value
        poisoned = np.zeros(ref[1].shape, bool)
        poisoned[0, 2, 5] = True
        ok = check("q %s at (0, 2, 5)" % value, call(entry, qp, k, v), ref, poisoned) and ok
        kp = k.copy()
        kp[0, 1, 40, 0] = value
        poisoned = np.zeros(ref[1].shape, bool)
        poisoned[0, heads_of[1], :] = rows_keep(40)
        nan_rows = value != value and args.nan_key == "nan-rows"
        ok = check("k %s at (0, 1, 40)" % value, call(entry, q, kp, v), ref, poisoned,
                   must_be_nonfinite=nan_rows) and ok
        vp = v.copy()
        vp[0, 0, 70, 2] = value
        poisoned = np.zeros(ref[1].shape, bool)
        poisoned[0, heads_of[0], :] = rows_keep(70) | (np.arange(SEQ) // BLOCK == 70 // BLOCK)
        got = call(entry, q, k, vp)
        # lse does not read v: only out's rows.
        bad = ~np.isfinite(got[0]).all(axis=3)
        rows_ok = np.array_equal(bad, poisoned)
        print("v %s at (0, 0, 70): %d rows non-finite, %d expected: %s"
              % (value, int(bad.sum()), int(poisoned.sum()), "ok" if rows_ok else "MISMATCH"))
        keep = ~poisoned
        ok = rows_ok and compare("v other rows out", got[0][keep], ref[0][keep], RTOL, ATOL) \
            and compare("v lse", got[1], ref[1], RTOL, ATOL) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
