#!/usr/bin/env python3
"""Assembles the PTX of every matrix variant with ptxas for each CUDA target, and records its use.

For each case of matrix.json (and each f32 case again in f16 and bf16): `attnc --emit=ptx
--backend B --target T` (the PTX the object embeds), then `ptxas -v -arch A`:
  - halide: T = cuda-sm80 (A = sm_80) and cuda-sm90 (A = sm_90);
  - mlir: T = cuda-sm80 (its mma.sync kernel, for sm_80 and later: A = sm_80 and sm_90a; f32
    on TF32) and cuda-sm90a (its wgmma + TMA kernel: A = sm_90a; bf16 and f16 only), and a
    spill fails the check.
A variant passes when ptxas accepts it; the table lists registers per thread, spilled bytes,
and the threads and shared memory per block the schedule chose (dynamic shared memory: ptxas
does not see it). No GPU is needed: this checks that the code assembles, not that it runs.
"""
import argparse
import os
import re
import sys

import attnc_matrix
from compiled_check import cases, run

# (attnc target, ptxas architecture) per backend.
TARGETS = {"halide": [("cuda-sm80", "sm_80"), ("cuda-sm90", "sm_90")],
           "mlir": [("cuda-sm80", "sm_80"), ("cuda-sm80", "sm_90a"), ("cuda-sm90a", "sm_90a")]}


def emit_ptx(args, case, target):
    """(PTX path or None, failure text) of one variant for one attnc target."""
    directory, spec = attnc_matrix.write_spec(case, args.work)
    ptx = os.path.join(directory, "%s-%s.ptx" % (args.backend, target))
    rc, out = run([args.attnc, spec, "--backend", args.backend, "--target", target,
                   "--emit=ptx", "-o", ptx])
    return (None, "attnc --emit=ptx exited with %d\n%s" % (rc, out)) if rc else (ptx, "")


def assemble(args, case, target, arch, ptx):
    """(ok, row or failure text) of one variant's PTX assembled for one architecture."""
    with open(ptx) as f:
        launch = f.readline().split(": ", 2)[-1].strip()
    rc, out = run([args.ptxas, "-v", "-arch", arch, ptx, "-o", os.devnull])
    if rc:
        return False, "ptxas -arch %s exited with %d\n%s" % (arch, rc, out)
    registers = max(int(n) for n in re.findall(r"Used (\d+) registers", out))
    spills = sum(int(n) for n in re.findall(r"(\d+) bytes spill stores", out))
    if spills and args.backend == "mlir":
        return False, "ptxas -arch %s spilled %d bytes\n%s" % (arch, spills, out)
    return True, "| %s | %s | %s | %d | %d | %s |" % (case["name"], target, arch, registers,
                                                     spills, launch)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attnc", required=True)
    parser.add_argument("--backend", choices=sorted(TARGETS), default="halide")
    parser.add_argument("--target", help="only this attnc target")
    parser.add_argument("--ptxas", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--report", help="also write the table (Markdown) here")
    args = parser.parse_args()
    matrix = attnc_matrix.load()
    rows, failed, ptx = [], 0, {}
    for case in cases(matrix, ["f16", "bf16"]):
        case["outputs"] = [o for o in case["outputs"] if o != "weights"]
        for target, arch in TARGETS[args.backend]:
            if args.target and target != args.target:
                continue
            if (args.backend, target, case["dtype"]) == ("mlir", "cuda-sm90a", "f32"):
                continue
            if (case["name"], target) not in ptx:  # one PTX per target, assembled per arch
                ptx[case["name"], target] = emit_ptx(args, case, target)
            path, failure = ptx[case["name"], target]
            ok, text = assemble(args, case, target, arch, path) if path else (False, failure)
            if ok:
                rows.append(text)
            else:
                failed += 1
                print("FAIL %s %s %s: %s" % (case["name"], target, arch, text))
    table = ["| variant | target | ptxas -arch | registers | spilled bytes | launch |",
             "|---|---|---|---|---|---|"] + rows
    print("\n".join(table))
    if args.report:
        with open(args.report, "w") as f:
            f.write("# ptxas on the %s backend's CUDA PTX (test/numerics/ptxas_check.py --backend "
                    "%s)\n\n" % (args.backend, args.backend)
                    + "\n".join(table) + "\n")
    print("%d accepted, %d failed" % (len(rows), failed))
    return 1 if failed or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
