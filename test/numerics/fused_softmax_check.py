#!/usr/bin/env python3
"""Checks the CPU kernels' fused softmax against the reference evaluator and the softmax pass.

With `softmax=fused` (the default) a full KV tile after a query tile's first one takes
P = 2^(s - m) against the rows' running max m in the Q K^T register blocks, and stands only
if every row sum of its P stays <= 2^12; otherwise the tile is computed again by the softmax
pass (`softmax=pass`). The check builds a dense spec both ways and runs them through the C
ABI on inputs that steer each tile down either path:
  - random: the max hardly moves after the first tile, every later tile stands: within the
    matrix tolerance of the reference, and not bit-identical to the pass (the fused path ran);
  - rising: every tile's scores rise 20 powers of 2 above the last, every fused tile is
    recomputed: bit-identical to the pass (a refused tile leaves no trace);
  - creeping: 6 per tile, so a tile stands with P up to 2^6 and the next one, whose sums
    pass 2^12, is recomputed, in turn: within tolerance;
  - spike: one key 30 above the rest in a middle tile: within tolerance.
Exit status 0 when every case holds.
"""
import argparse
import ctypes
import os
import sys

import numpy as np

from device_run import call_f32, compare, run_tool as run

HEADS, DIM, SEQ, BLOCK_KV = 2, 32, 512, 64
SPEC = """attn.kernel @fused {
  attn.attention {num_heads = %d, head_dim = %d, dtype = f32, layout = bhsd,
                  mask = #attn.full, outputs = [out, lse]}
}
""" % (HEADS, DIM)
RTOL, ATOL = 2e-5, 2e-6  # the matrix's f32 tolerance; |v| < 1
LOG2E = 1.4426950408889634


def build(attnc, spec, target, softmax, work):
    so = os.path.join(work, softmax + ".so")
    run([attnc, spec, "--target", target, "--emit=so", "--schedule",
         "block_kv=%d,softmax=%s" % (BLOCK_KV, softmax), "-o", so])
    entry = getattr(ctypes.CDLL(os.path.abspath(so)), "fused")
    entry.restype = ctypes.c_int
    return entry


def reference(attnc_run, spec, work, name, q, k, v):
    """out and lse of the reference evaluator (attnc-run --reference, double) on q, k, v."""
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    for n, a in (("q", q), ("k", k), ("v", v)):
        np.save(os.path.join(d, n + ".npy"), a)
    run([attnc_run, spec, "--reference", "-q", os.path.join(d, "q.npy"), "-k",
         os.path.join(d, "k.npy"), "-v", os.path.join(d, "v.npy"), "-o", d])
    return tuple(np.load(os.path.join(d, n + ".npy")).astype(np.float64) for n in ("out", "lse"))


def rising_keys(rng, per_tile):
    """Keys whose score with every query (q = e0) rises per_tile powers of 2 per KV tile."""
    k = rng.uniform(-1, 1, (1, HEADS, SEQ, DIM)).astype(np.float32) * 0.01
    step = per_tile / (BLOCK_KV * LOG2E / np.sqrt(DIM))
    k[..., 0] = np.arange(SEQ) * step
    return k


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attnc", required=True)
    parser.add_argument("--attnc-run", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--target", default="x86-64-avx2")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    spec = os.path.join(args.work, "fused.mlir")
    with open(spec, "w") as f:
        f.write(SPEC)
    fused = build(args.attnc, spec, args.target, "fused", args.work)
    pass_ = build(args.attnc, spec, args.target, "pass", args.work)

    rng = np.random.default_rng(11)
    shape = (1, HEADS, SEQ, DIM)
    rand = lambda: rng.uniform(-1, 1, shape).astype(np.float32)
    q, k, v = rand(), rand(), rand()
    e0 = np.zeros(shape, np.float32)
    e0[..., 0] = 1
    spike = k.copy()  # key 266 scores 30 powers of 2 with the queries near e0
    spike[:, :, 4 * BLOCK_KV + 10, :] = 0
    spike[:, :, 4 * BLOCK_KV + 10, 0] = 30 * np.sqrt(DIM) / LOG2E
    cases = [("random", q, k, "differ"),
             ("rising", e0, rising_keys(rng, 20), "identical"),
             ("creeping", e0, rising_keys(rng, 6), "differ"),
             ("spike", e0 + 0.01 * rand(), spike, None)]
    ok = True
    for name, qc, kc, versus_pass in cases:
        got, by_pass = call_f32(fused, qc, kc, v), call_f32(pass_, qc, kc, v)
        ref = reference(args.attnc_run, spec, args.work, name, qc, kc, v)
        ok = compare(name + " out", got[0].astype(np.float64), ref[0], RTOL, ATOL) and ok
        ok = compare(name + " lse", got[1].astype(np.float64), ref[1], RTOL, ATOL) and ok
        same = all(np.array_equal(a, b) for a, b in zip(got, by_pass))
        if versus_pass:
            good = same == (versus_pass == "identical")
            print("%s against softmax=pass: %s, expected %s: %s"
                  % (name, "identical" if same else "differ", versus_pass,
                     "ok" if good else "MISMATCH"))
            ok = good and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
