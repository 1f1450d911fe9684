#!/usr/bin/env python3
"""Checks the matrix's tf32 tolerance against a model of what TF32 tensor cores round.

The mlir backend runs f32 specs on TF32 (cuda-sm80): q, k, v and P are rounded to a 10-bit
mantissa (cvt.rna: to nearest, ties away from zero), products accumulate in f32. No GPU is
needed for this part: for every f32 case of matrix.json (its head_dim and lengths, the
matrix's inputs: uniform in [-1, 1), as attnc-run seeds them), attention with those roundings
is compared against attention in float64 under matrix.json's "tf32" tolerance. Prints the
worst error as a fraction of the tolerance per case; fails above `--limit` of it (0.5: the
kernel's own order of f32 additions needs room too). This checks the tolerance, not a kernel.
"""
import argparse
import sys

import numpy as np

import attnc_matrix


def tf32(x):
    """x rounded to TF32 as cvt.rna.tf32.f32 does (finite inputs)."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x1000) & 0xFFFFE000).astype(np.uint32).view(np.float32)


def attention(q, k, v, round_p):
    s = q.astype(np.float64) @ k.T.astype(np.float64) / np.sqrt(q.shape[1])
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return round_p(p.astype(np.float32)).astype(np.float64) @ v.astype(np.float64) / \
        p.sum(axis=1, keepdims=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=float, default=0.5)
    args = parser.parse_args()
    matrix = attnc_matrix.load()
    tol = matrix["tolerances"]["tf32"]
    rng = np.random.default_rng(5)
    worst = 0.0
    for case in matrix["cases"]:
        if case["dtype"] != "f32" or case["seq_q"] == 0 or case["seq_kv"] == 0:
            continue
        d = case["head_dim"]
        q = rng.uniform(-1, 1, (case["seq_q"], d)).astype(np.float32)
        k, v = (rng.uniform(-1, 1, (case["seq_kv"], d)).astype(np.float32) for _ in range(2))
        ref = attention(q, k, v, lambda p: p)
        got = attention(tf32(q), tf32(k), tf32(v), tf32)
        ratio = float((np.abs(got - ref) / (tol["atol"] + tol["rtol"] * np.abs(ref))).max())
        worst = max(worst, ratio)
        print("%-40s %.3f of the tf32 tolerance" % (case["name"], ratio))
    print("worst: %.3f (limit %.2f)" % (worst, args.limit))
    return 0 if worst <= args.limit else 1


if __name__ == "__main__":
    sys.exit(main())
