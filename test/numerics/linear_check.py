#!/usr/bin/env python3
"""attnc's linear attention reference against an independent float64 NumPy evaluation.

attnc-run --reference evaluates attn.linear_attention pair by pair (each row's phi(q) .
phi(k) over the keys it sees); this script evaluates the same kernels by the recurrence
(S_i = S_{i-1} + phi(k_i)^T v_i, z_i = z_{i-1} + phi(k_i), out_i = phi(q_i) S_i /
(phi(q_i) . z_i + eps)) or, non-causal, with the whole state first, and compares out, the
final state and the normalizer at 1e-6 relative to each tensor's largest entry: both compute
in float64, and the files hold float32 (each entry rounded once, 6e-8 relative). With
--attnc, the compiled kernels (f32) are checked against the same recurrence at 1e-4 on the
same seeded inputs, the causal ones also at each of --lengths.

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


def kernel_text(name, params):
    return ("attn.kernel @%s {\n  attn.linear_attention {dtype = f32, layout = bhsd, %s}\n}\n"
            % (name, params))


def check(name, got, want, tol):
    err = np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-300)
    ok = err <= tol
    print("%s %s rel err %.2e (tolerance %.0e)" % ("PASS" if ok else "FAIL", name, err, tol))
    return ok


def run_case(args, name, spec, sq, skv, carry, expect):
    """The reference's files for (sq, skv) checked at 1e-6 (they are float32); with --so, the
    kernel's out and final state on the same seeded inputs at 1e-4."""
    out_dir = os.path.join(args.work, "%s_%d_%d" % (name, sq, skv))
    common = [spec, "--batch", "2", "--seq-q", str(sq), "--seq-kv", str(skv), "--seed", "7"]
    subprocess.run([args.attnc_run] + common + ["--reference", "-o", out_dir], check=True,
                   stdout=subprocess.DEVNULL)
    load = lambda d, n: np.load(os.path.join(d, n + ".npy")).astype(np.float64)
    q, k, v = load(out_dir, "q"), load(out_dir, "k"), load(out_dir, "v")
    s0, z0 = (load(out_dir, "initial_state"), load(out_dir, "initial_norm")) if carry \
        else (None, None)
    out, fs, fz = expect(q, k, v, s0, z0)
    label = "%s T=%d" % (name, sq) if sq == skv else "%s %dx%d" % (name, sq, skv)
    ok = check(label + " reference out", load(out_dir, "out"), out, 1e-6)
    ok &= check(label + " reference final_state", load(out_dir, "final_state"), fs, 1e-6)
    ok &= check(label + " reference final_norm", load(out_dir, "final_norm"), fz, 1e-6)
    if args.so:
        kernel_dir = out_dir + "_kernel"
        subprocess.run([args.attnc_run] + common + ["--so", args.so, "--kernel", name,
                                                    "--no-reference", "--no-peak", "--repeat",
                                                    "1", "-o", kernel_dir],
                       check=True, stdout=subprocess.DEVNULL)
        ok &= check(label + " kernel out", load(kernel_dir, "out"), out, 1e-4)
        if carry:
            ok &= check(label + " kernel final_state", load(kernel_dir, "final_state"), fs, 1e-4)
    return ok


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--attnc-run", required=True)
    p.add_argument("--attnc", help="also compile the kernels and check them (1e-4)")
    p.add_argument("--target", default="host")
    p.add_argument("--lengths", type=int, nargs="*", default=[],
                   help="causal lengths to run each causal kernel at, beside its own")
    p.add_argument("--work", required=True)
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    specs = "".join(kernel_text(name, spec[0]) for name, spec in SPECS.items())
    spec = os.path.join(args.work, "linear.mlir")
    with open(spec, "w") as f:
        f.write(specs)
    args.so = None
    if args.attnc:
        args.so = os.path.join(args.work, "linear.so")
        subprocess.run([args.attnc, spec, "--target=" + args.target, "--emit=so", "-o",
                        args.so], check=True)
    ok = True
    for name, (params, causal, carry, fmap, normalize, scale, eps, sq, skv) in SPECS.items():
        def expect(q, k, v, s0, z0):
            return recurrence(q, k, v, s0, z0, causal, fmap, normalize, scale, eps,
                              q.shape[1] // k.shape[1])
        one = os.path.join(args.work, name + ".mlir")
        with open(one, "w") as f:
            f.write(kernel_text(name, params))
        lengths = [(sq, skv)] + ([(t, t) for t in args.lengths] if causal else [])
        for a, b in lengths:
            ok &= run_case(args, name, one, a, b, carry, expect)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
