#!/usr/bin/env python3
"""attnc's multi-head attention reference against a float64 NumPy evaluation from the .npy
files `attnc-run --reference` wrote for a kernel with nn.Linear weights, a full or causal
mask and the default scale: out = softmax(q k^T / sqrt(d)) v per head, from x's projection,
then the output projection. Compared at 1e-6 relative to out's largest entry (the files hold
float32). Prints PASS / FAIL and exits non-zero on a failure.
"""
import argparse
import os
import sys

import numpy as np


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("--heads", type=int, required=True)
    p.add_argument("--kv-heads", type=int, required=True)
    p.add_argument("--causal", action="store_true")
    args = p.parse_args()
    load = lambda n: np.load(os.path.join(args.dir, n + ".npy")).astype(np.float64)
    x, w_in, b_in = load("x"), load("in_proj_weight"), load("in_proj_bias")
    w_out, b_out, want = load("out_proj_weight"), load("out_proj_bias"), load("out")
    h, g = args.heads, args.kv_heads
    batch, seq, _ = x.shape
    d = w_in.shape[0] // (h + 2 * g)
    proj = x @ w_in.T + b_in
    q = proj[..., :h * d].reshape(batch, seq, h, d)
    k = proj[..., h * d:(h + g) * d].reshape(batch, seq, g, d)
    v = proj[..., (h + g) * d:].reshape(batch, seq, g, d)
    k, v = np.repeat(k, h // g, axis=2), np.repeat(v, h // g, axis=2)
    s = np.einsum("bihd,bjhd->bhij", q, k) / np.sqrt(d)
    if args.causal:
        s = np.where(np.tril(np.ones((seq, seq), bool)), s, -np.inf)
    p_ = np.exp(s - s.max(-1, keepdims=True))
    p_ /= p_.sum(-1, keepdims=True)
    attn = np.einsum("bhij,bjhd->bihd", p_, v).reshape(batch, seq, h * d)
    out = attn @ w_out.T + b_out
    err = np.max(np.abs(out - want)) / np.max(np.abs(out))
    ok = err <= 1e-6
    print("%s out rel err %.2e" % ("PASS" if ok else "FAIL", err))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
