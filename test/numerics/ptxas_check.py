#!/usr/bin/env python3
"""Assembles the PTX of every matrix variant with ptxas for each CUDA target, and records its use.

For each case of matrix.json or --matrix (and each f32 case again in f16 and bf16), a kernel
in one spec per target: `attnc --emit=ptx --backend B --target T` writes the PTX each object
embeds, headed by its kernel's launch line, and each kernel's PTX goes to `ptxas -v -arch A`:
  - halide: T = cuda-sm80 (A = sm_80) and cuda-sm90 (A = sm_90);
  - mlir: T = cuda-sm80 (its mma.sync kernel, for sm_80 and later: A = sm_80 and sm_90a; f32
    on TF32) and cuda-sm90a (its wgmma + TMA kernel: A = sm_90a; bf16 and f16 only; a decode
    kernel's mma.sync, f32 too), and a spill fails the check.
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


def emit_ptx(args, group, target):
    """{case name: (PTX path or None, failure text)} for one attnc target: one spec of the
    group's kernels, one `attnc --emit=ptx` (a process per case paid attnc's start each),
    its output cut at each kernel's launch line."""
    spec = attnc_matrix.write_matrix_spec(
        group, os.path.join(args.work, "%s-%s.mlir" % (args.backend, target)))
    rc, out = run([args.attnc, spec, "--backend", args.backend, "--target", target,
                   "--emit=ptx", "-o", spec[:-len(".mlir")] + ".ptx"])
    if rc:
        return {c["name"]: (None, "attnc --emit=ptx exited with %d\n%s" % (rc, out))
                for c in group}
    with open(spec[:-len(".mlir")] + ".ptx") as f:
        sections = re.split(r"^(?=// attnc: kernel )", f.read(), flags=re.M)
    ptx = {}
    for section in filter(None, sections):
        name = section.split(":", 2)[1].split()[-1]
        path = os.path.join(args.work, "%s-%s-%s.ptx" % (name, args.backend, target))
        with open(path, "w") as f:
            f.write(section)
        ptx[name] = (path, "")
    missing = (None, "attnc --emit=ptx wrote no PTX for this kernel")
    return {c["name"]: ptx.get(c["name"], missing) for c in group}


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
    parser.add_argument("--matrix", default=attnc_matrix.MATRIX,
                        help="the cases (default: matrix.json)")
    args = parser.parse_args()
    matrix = attnc_matrix.load(args.matrix)
    os.makedirs(args.work, exist_ok=True)
    selected = list(cases(matrix, ["f16", "bf16"]))
    for case in selected:
        case["outputs"] = [o for o in case["outputs"] if o != "weights"]
    # The wgmma kernel takes bf16 and f16 only; a decode kernel (num_splits) runs mma.sync on
    # every target, f32 on TF32 too.
    takes = lambda target, case: "num_splits" in case or (
        args.backend, target, case["dtype"]) != ("mlir", "cuda-sm90a", "f32")
    targets = [(t, a) for t, a in TARGETS[args.backend] if t == (args.target or t)]
    ptx = {t: emit_ptx(args, [c for c in selected if takes(t, c)], t)
           for t in dict(targets)}  # one PTX per target, assembled per arch
    rows, failed = [], 0
    for case in selected:
        for target, arch in targets:
            if not takes(target, case):
                continue
            path, failure = ptx[target][case["name"]]
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
