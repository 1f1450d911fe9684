#!/usr/bin/env python3
"""attnc's linear attention reference against an independent float64 NumPy evaluation.

attnc-run --reference evaluates attn.linear_attention pair by pair (each row's phi(q) .
phi(k) over the keys it sees); this script evaluates the same kernels by the recurrence
(S_i = S_{i-1} + phi(k_i)^T v_i, z_i = z_{i-1} + phi(k_i), out_i = phi(q_i) S_i /
(phi(q_i) . z_i + eps)) or, non-causal, with the whole state first, and compares out, the
final state and the normalizer at 1e-6 relative to each tensor's largest entry: both compute
in float64, and the files hold float32 (each entry rounded once, 6e-8 relative).

Prints PASS / FAIL lines and exits non-zero on a failure.
"""
import argparse
import os
import subprocess
import sys

import numpy as np

SPECS = {
    # name: (parameters, causal, carry, feature map, normalize, scale, eps, seq_q, seq_kv)
    "causal_carry": ("num_heads = 4, num_kv_heads = 2, head_dim = 12, value_dim = 8, "
                     "feature_map = elu1, causal = true, state = carry",
                     True, True, "elu1", True, 1.0, 1e-6, 37, 37),
    "causal_relu": ("num_heads = 2, head_dim = 16, feature_map = relu, causal = true, "
                    "scale = 0.5, eps = 0.01", True, False, "relu", True, 0.5, 0.01, 50, 50),
    "noncausal": ("num_heads = 3, num_kv_heads = 1, head_dim = 8, value_dim = 20, "
                  "feature_map = elu1", False, False, "elu1", True, 1.0, 1e-6, 19, 41),
    "unnormalized": ("num_heads = 2, head_dim = 8, feature_map = identity, causal = true, "
                     "normalize = false", True, False, "identity", False, 1.0, 0.0, 30, 30),
}


def phi(name, x):
    if name == "elu1":
        return np.where(x > 0, x + 1, np.exp(np.minimum(x, 0)))
    if name == "relu":
        return np.maximum(x, 0)
    return x


def recurrence(q, k, v, s0, z0, causal, fmap, normalize, scale, eps, group):
    """out [b, h, sq, dv], final state and normalizer, bhsd, in float64."""
    b, h, sq, _ = q.shape
    kv_heads, dk, dv = k.shape[1], k.shape[3], v.shape[3]
    out = np.zeros((b, h, sq, dv))
    fs, fz = np.zeros((b, kv_heads, dk, dv)), np.zeros((b, kv_heads, dk))
    for bi in range(b):
        for g in range(kv_heads):
            pk = phi(fmap, k[bi, g])
            s = s0[bi, g].copy() if s0 is not None else np.zeros((dk, dv))
            z = z0[bi, g].copy() if z0 is not None else np.zeros(dk)
            states = []  # causal: the state after each row
            for j in range(k.shape[2]):
                s, z = s + np.outer(pk[j], v[bi, g, j]), z + pk[j]
                states.append((s, z))
            fs[bi, g], fz[bi, g] = s, z
            for hh in range(g * group, (g + 1) * group):
                pq = scale * phi(fmap, q[bi, hh])
                for i in range(sq):
                    si, zi = states[i] if causal else (s, z)
                    num, den = pq[i] @ si, pq[i] @ zi + eps
                    out[bi, hh, i] = (num / den if den != 0 else 0) if normalize else num
    return out, fs, fz


def check(name, got, want):
    err = np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-300)
    ok = err <= 1e-6
    print("%s %s rel err %.2e" % ("PASS" if ok else "FAIL", name, err))
    return ok


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--attnc-run", required=True)
    p.add_argument("--work", required=True)
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    ok = True
    for name, (params, causal, carry, fmap, normalize, scale, eps, sq, skv) in SPECS.items():
        spec = os.path.join(args.work, name + ".mlir")
        with open(spec, "w") as f:
            f.write("attn.kernel @%s {\n  attn.linear_attention {dtype = f32, layout = bhsd, %s}\n}\n"
                    % (name, params))
        out_dir = os.path.join(args.work, name)
        subprocess.run([args.attnc_run, spec, "--reference", "--batch", "2", "--seq-q", str(sq),
                        "--seq-kv", str(skv), "--seed", "7", "-o", out_dir],
                       check=True, stdout=subprocess.DEVNULL)
        load = lambda n: np.load(os.path.join(out_dir, n + ".npy")).astype(np.float64)
        q, k, v = load("q"), load("k"), load("v")
        s0, z0 = (load("initial_state"), load("initial_norm")) if carry else (None, None)
        group = q.shape[1] // k.shape[1]
        out, fs, fz = recurrence(q, k, v, s0, z0, causal, fmap, normalize, scale, eps, group)
        ok &= check(name + " out", load("out"), out)
        ok &= check(name + " final_state", load("final_state"), fs)
        ok &= check(name + " final_norm", load("final_norm"), fz)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
