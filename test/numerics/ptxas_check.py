#!/usr/bin/env python3
"""Assembles the PTX of every matrix variant with ptxas for each CUDA target, and records its use.

For each case of matrix.json (and each f32 case again in f16 and bf16): `attnc --emit=ptx
--backend halide --target T` (the Halide GPU schedule's PTX, as the object embeds it), then
`ptxas -v -arch A` for T = cuda-sm80 (A = sm_80) and cuda-sm90 (A = sm_90). A variant passes
when ptxas accepts it; the table lists registers per thread, spilled bytes, and the threads and
shared memory per block the schedule chose (dynamic shared memory: ptxas does not see it). No
GPU is needed: this checks that the code assembles, not that it runs.
"""
import argparse
import os
import re
import sys

import attnc_matrix
from compiled_check import cases, run

TARGETS = {"cuda-sm80": "sm_80", "cuda-sm90": "sm_90"}


def check(args, case, target):
    """(ok, row or failure text) of one variant on one target."""
    directory, spec = attnc_matrix.write_spec(case, args.work)
    ptx = os.path.join(directory, target + ".ptx")
    rc, out = run([args.attnc, spec, "--backend", "halide", "--target", target,
                   "--emit=ptx", "-o", ptx])
    if rc:
        return False, "attnc --emit=ptx exited with %d\n%s" % (rc, out)
    with open(ptx) as f:
        launch = f.readline().split(": ", 2)[-1].strip()
    rc, out = run([args.ptxas, "-v", "-arch", TARGETS[target], ptx, "-o", os.devnull])
    if rc:
        return False, "ptxas -arch %s exited with %d\n%s" % (TARGETS[target], rc, out)
    registers = max(int(n) for n in re.findall(r"Used (\d+) registers", out))
    spills = sum(int(n) for n in re.findall(r"(\d+) bytes spill stores", out))
    return True, "| %s | %s | %d | %d | %s |" % (case["name"], target, registers, spills, launch)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attnc", required=True)
    parser.add_argument("--ptxas", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--report", help="also write the table (Markdown) here")
    args = parser.parse_args()
    matrix = attnc_matrix.load()
    rows, failed = [], 0
    for case in cases(matrix, ["f16", "bf16"]):
        case["outputs"] = [o for o in case["outputs"] if o != "weights"]
        for target in TARGETS:
            ok, text = check(args, case, target)
            if ok:
                rows.append(text)
            else:
                failed += 1
                print("FAIL %s %s: %s" % (case["name"], target, text))
    table = ["| variant | target | registers | spilled bytes | launch |",
             "|---|---|---|---|---|"] + rows
    print("\n".join(table))
    if args.report:
        with open(args.report, "w") as f:
            f.write("# ptxas on the Halide GPU schedule's PTX (test/numerics/ptxas_check.py)\n\n"
                    + "\n".join(table) + "\n")
    print("%d accepted, %d failed" % (len(rows), failed))
    return 1 if failed or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
