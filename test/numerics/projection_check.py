#!/usr/bin/env python3
"""attnc's projection reference against a float64 NumPy evaluation from the .npy files
`attnc-run --reference` wrote for an attn.projection kernel: y = x W^T + bias (nn.Linear's
[out, in] weight, or MatMul's [in, out] with --onnx: y = x W + bias). The reference's y is
compared at 1e-6 relative to y's largest entry (the files hold the kernel's dtype: pass f32
specs); with --kernel-out, a compiled f32 kernel's y on the same inputs (attnc-run --so -o) at
1e-5. Prints PASS / FAIL and exits non-zero on a failure.
"""
import argparse
import os
import sys

import numpy as np


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("--onnx", action="store_true", help="MatMul weight [in, out]")
    p.add_argument("--kernel-out", help="a compiled kernel's y.npy on the same inputs")
    args = p.parse_args()
    load = lambda n: np.load(os.path.join(args.dir, n + ".npy")).astype(np.float64)
    x, w, want = load("x"), load("weight"), load("y")
    y = x @ (w if args.onnx else w.T)
    if os.path.exists(os.path.join(args.dir, "bias.npy")):
        y = y + load("bias")

    def check(name, got, tol):
        err = np.max(np.abs(y - got)) / np.max(np.abs(y))
        ok = err <= tol
        print("%s %s rel err %.2e (tolerance %.0e)" % ("PASS" if ok else "FAIL", name, err, tol))
        return ok

    ok = check("reference y", want, 1e-6)
    if args.kernel_out:
        ok &= check("kernel y", np.load(args.kernel_out).astype(np.float64), 1e-5)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
