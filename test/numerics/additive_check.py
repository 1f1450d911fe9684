#!/usr/bin/env python3
"""attnc's additive (Bahdanau) attention kernel against a float64 NumPy formula of the Keras
layer (AdditiveAttention with use_scale: scores = sum_d v_d tanh(q_d + k_d), softmax over the
keys, then the values), on q and k already projected, for every (Tq, Tv) of --lengths-q x
--lengths-kv: the compiled f32 kernel's out (attnc-run --so -o, on its seeded q, k, v) at 1e-5
relative to out's largest entry. Prints PASS / FAIL lines and exits non-zero on a failure.
"""
import argparse
import os
import subprocess
import sys

import numpy as np

HEADS, DIM = 2, 32
SPEC = """attn.kernel @keras {
  attn.attention {num_heads = %d, head_dim = %d, dtype = f32, layout = bhsd, mask = #attn.full,
                  outputs = [out], inputs = [va: f32 [heads, head_dim]], additive = @va}
}
""" % (HEADS, DIM)


def keras(q, k, v, va):
    """out [b, h, tq, d] in float64, one head and block of queries at a time (the (Tq, Tv,
    d) tensor the Keras layer builds, kept small)."""
    out = np.zeros(q.shape)
    for b in range(q.shape[0]):
        for h in range(q.shape[1]):
            for i0 in range(0, q.shape[2], 16):
                qi = q[b, h, i0:i0 + 16]
                s = (va[h] * np.tanh(qi[:, None, :] + k[b, h][None, :, :])).sum(-1)
                p = np.exp(s - s.max(-1, keepdims=True))
                out[b, h, i0:i0 + 16] = (p / p.sum(-1, keepdims=True)) @ v[b, h]
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--attnc", required=True)
    p.add_argument("--attnc-run", required=True)
    p.add_argument("--target", default="host")
    p.add_argument("--lengths-q", type=int, nargs="+", default=[1, 7, 128])
    p.add_argument("--lengths-kv", type=int, nargs="+", default=[1, 33, 512, 4096])
    p.add_argument("--work", required=True)
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    spec, so = os.path.join(args.work, "keras.mlir"), os.path.join(args.work, "keras.so")
    with open(spec, "w") as f:
        f.write(SPEC)
    subprocess.run([args.attnc, spec, "--target=" + args.target, "--emit=so", "-o", so],
                   check=True)
    va = np.random.RandomState(5).uniform(-1, 1, (HEADS, DIM)).astype(np.float32)
    np.save(os.path.join(args.work, "va.npy"), va)
    ok = True
    for tq in args.lengths_q:
        for tv in args.lengths_kv:
            out_dir = os.path.join(args.work, "%d_%d" % (tq, tv))
            subprocess.run([args.attnc_run, spec, "--so", so, "--seq-q", str(tq), "--seq-kv",
                            str(tv), "--batch", "2", "--input",
                            "va=" + os.path.join(args.work, "va.npy"), "--no-reference",
                            "--no-peak", "--repeat", "1", "-o", out_dir],
                           check=True, stdout=subprocess.DEVNULL)
            load = lambda n: np.load(os.path.join(out_dir, n + ".npy")).astype(np.float64)
            want = keras(load("q"), load("k"), load("v"), va.astype(np.float64))
            err = np.max(np.abs(load("out") - want)) / np.max(np.abs(want))
            good = err <= 1e-5
            ok &= good
            print("%s Tq=%d Tv=%d rel err %.2e (tolerance 1e-05)"
                  % ("PASS" if good else "FAIL", tq, tv, err))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
