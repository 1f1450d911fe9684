#!/usr/bin/env python3
"""attnc's multi-head attention reference against a float64 NumPy evaluation from the .npy
files `attnc-run --reference` wrote for a kernel with a full or causal mask and the default
scale (nn.Linear weights, or MatMul's with --onnx): out = softmax(q k^T / sqrt(d)) v per head,
from x's projection, then the output projection; where the directory holds key_lengths.npy
(key_padding = lengths), sequence b's keys from key_lengths[b] on are masked (a row with no
key is 0). The reference's out is compared at 1e-6
relative to out's largest entry (the files hold float32); with --kernel-out, a compiled f32
kernel's out on the same inputs (attnc-run --so -o) at 1e-5. Prints PASS / FAIL and exits
non-zero on a failure.
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
    p.add_argument("--onnx", action="store_true", help="MatMul weights [in, out]")
    p.add_argument("--kernel-out", help="a compiled kernel's out.npy on the same inputs")
    args = p.parse_args()
    load = lambda n: np.load(os.path.join(args.dir, n + ".npy")).astype(np.float64)
    x, w_in, b_in = load("x"), load("in_proj_weight"), load("in_proj_bias")
    w_out, b_out, want = load("out_proj_weight"), load("out_proj_bias"), load("out")
    if args.onnx:  # MatMul's [in, out]: nn.Linear's transposed
        w_in, w_out = w_in.T, w_out.T
    h, g = args.heads, args.kv_heads
    batch, seq, _ = x.shape
    d = w_in.shape[0] // (h + 2 * g)
    proj = x @ w_in.T + b_in
    q = proj[..., :h * d].reshape(batch, seq, h, d)
    k = proj[..., h * d:(h + g) * d].reshape(batch, seq, g, d)
    v = proj[..., (h + g) * d:].reshape(batch, seq, g, d)
    k, v = np.repeat(k, h // g, axis=2), np.repeat(v, h // g, axis=2)
    s = np.einsum("bihd,bjhd->bhij", q, k) / np.sqrt(d)
    keep = np.ones((batch, 1, seq, seq), bool)
    if args.causal:
        keep &= np.tril(np.ones((seq, seq), bool))
    lengths_file = os.path.join(args.dir, "key_lengths.npy")
    if os.path.exists(lengths_file):
        keep &= np.arange(seq)[None, None, None, :] < np.load(lengths_file)[:, None, None, None]
    s = np.where(keep, s, -np.inf)
    top = s.max(-1, keepdims=True)
    p_ = np.exp(s - np.where(np.isfinite(top), top, 0))
    p_ /= np.maximum(p_.sum(-1, keepdims=True), np.finfo(np.float64).tiny)
    attn = np.einsum("bhij,bjhd->bihd", p_, v).reshape(batch, seq, h * d)
    out = attn @ w_out.T + b_out
    def check(name, got, tol):
        err = np.max(np.abs(out - got)) / np.max(np.abs(out))
        ok = err <= tol
        print("%s %s rel err %.2e (tolerance %.0e)" % ("PASS" if ok else "FAIL", name, err, tol))
        return ok
    ok = check("reference out", want, 1e-6)
    if args.kernel_out:
        ok &= check("kernel out", np.load(args.kernel_out).astype(np.float64), 1e-5)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
