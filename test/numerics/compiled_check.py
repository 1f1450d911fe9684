#!/usr/bin/env python3
"""Runs the numeric matrix through attnc's compiled CPU kernels.

For each case of matrix.json, every dtype: build the case's spec with `attnc --emit=so
--backend B --target T`, run it with `attnc-run --so` on seeded inputs, and let attnc-run compare every
output with the reference evaluator under the matrix's tolerance for the case's dtype
(matrix.json "tolerances"; f32: rtol 2e-5, atol 2e-6: f32 accumulation over tiles and a
polynomial exp, against a double reference; f16 / bf16 also round q, k, v and out). A case
that does not compile fails like one that computes wrong values. The reference-only `weights`
output is left out of the compiled spec.

With --runner device (the OpenCL target on PoCL), attnc-run only writes the inputs and the
reference outputs as .npy, and device_run.py runs the kernel in a process without libMLIR
(see its docstring) and compares under the same tolerance.
"""
import argparse
import copy
import os
import subprocess
import sys
import time

import attnc_matrix

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, env=None):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=env)
    return proc.returncode, proc.stdout


def run_forced(cmd, variant):
    """Runs attnc-run with ATTNC_TARGET forcing `variant` of a multi-target kernel, and fails
    unless that variant's code ran (attnc-run prints attnc_last_target())."""
    rc, out = run(cmd, dict(os.environ, ATTNC_TARGET=variant))
    if rc == 0 and ("code ran: %s\n" % variant) not in out:
        return 1, out + "\n(the code that ran was not the forced variant %s)" % variant
    return rc, out


def cases(matrix, also_dtypes):
    """The matrix's cases, then each f32 case again in every dtype of also_dtypes: every mask,
    mod, layout and GQA shape the f32 kernels are checked on, in f16 / bf16 too."""
    for case in matrix["cases"]:
        yield copy.deepcopy(case)
    for dtype in also_dtypes:
        for case in matrix["cases"]:
            if case["dtype"] == "f32":
                case = copy.deepcopy(case)
                case["name"] += "_as_" + dtype
                case["dtype"] = dtype
                yield case


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attnc", required=True)
    parser.add_argument("--attnc-run", required=True)
    parser.add_argument("--target", required=True)
    parser.add_argument("--backend", default="mlir")
    parser.add_argument("--work", required=True)
    parser.add_argument("--only", help="run only the cases of these names (comma-separated)")
    parser.add_argument("--schedule", help="passed to attnc --schedule")
    parser.add_argument("--also-dtypes", nargs="*", default=[], choices=["f16", "bf16"],
                        help="also run every f32 case in these dtypes (named CASE_as_DTYPE)")
    parser.add_argument("--dtypes", nargs="*", default=["f32", "f16", "bf16"],
                        choices=["f32", "f16", "bf16"],
                        help="run only the cases of these dtypes (the target's dtypes)")
    parser.add_argument("--force-variants", default="",
                        help="with a multi-target --target list: run each case once per "
                             "variant named here (comma-separated), forced by ATTNC_TARGET")
    parser.add_argument("--runner", choices=["attnc-run", "device", "cross"],
                        default="attnc-run",
                        help="who runs the kernel: attnc-run, device_run.py in its own "
                             "process on attnc-run's .npy files, or cross_run.py (an object "
                             "for another architecture, under --emulator)")
    parser.add_argument("--cross-cxx", help="with --runner cross: the target's C++ compiler")
    parser.add_argument("--emulator", help="with --runner cross: runs target binaries")
    parser.add_argument("--halide-include", help="with --runner cross: HalideRuntime.h's dir")
    args = parser.parse_args()
    matrix = attnc_matrix.load()
    passed = failed = 0
    compile_times = []
    for case in cases(matrix, args.also_dtypes):
        if args.only and case["name"] not in args.only.split(","):
            continue
        if case["dtype"] not in args.dtypes:
            continue
        case["outputs"] = [o for o in case["outputs"] if o != "weights"]
        directory, spec = attnc_matrix.write_spec(case, args.work)
        emit = "obj" if args.runner == "cross" else "so"
        so = os.path.join(directory, "kernel." + ("o" if emit == "obj" else "so"))
        start = time.monotonic()
        step = "attnc --emit=" + emit
        rc, out = run([args.attnc, spec, "--backend", args.backend, "--target", args.target,
                       "--emit=" + emit, "-o", so] +
                      (["--schedule", args.schedule] if args.schedule else []))
        compile_times.append(time.monotonic() - start)
        tol = matrix["tolerances"][case["dtype"]]
        size = ["--batch", str(case["batch"]), "--seq-q", str(case["seq_q"]),
                "--seq-kv", str(case["seq_kv"]), "--seed", "5"]
        tolerance = ["--rtol", str(tol["rtol"]), "--atol", str(tol["atol"])]
        if rc == 0 and args.runner in ("cross", "device"):
            # attnc-run writes the inputs and the reference; a runner script of its own
            # process calls the kernel and compares.
            step = "attnc-run --reference"
            reference = os.path.join(directory, "reference")
            rc, out = run([args.attnc_run, spec, "--reference", "-o", reference] + size)
            if rc == 0:
                step = args.runner + "_run.py"
                common = ["--kernel", case["name"], "--dir", reference, "--dtype", case["dtype"]]
                common += (["--lse"] if "lse" in case["outputs"] else []) + tolerance
                if args.runner == "cross":
                    runner = ["--obj", so, "--layout", case["layout"], "--cxx", args.cross_cxx,
                              "--emulator", args.emulator, "--halide-include",
                              args.halide_include, "--work",
                              os.path.join(args.work, "cross-runtime")]
                else:
                    runner = ["--so", so]
                rc, out = run([sys.executable, os.path.join(HERE, step)] + runner + common)
        elif rc == 0:
            step = "attnc-run --so"
            cmd = [args.attnc_run, spec, "--so", so, "--num-threads", "2", "--repeat", "1",
                   "--no-peak"] + size + tolerance
            if not args.force_variants:
                rc, out = run(cmd)
            for variant in filter(None, args.force_variants.split(",")):
                step = "attnc-run --so with ATTNC_TARGET=" + variant
                rc, out = run_forced(cmd, variant)
                if rc:
                    break
        errors = [l.strip() for l in out.splitlines() if "max abs err" in l]
        if rc == 0:
            print("PASS %-42s %s" % (case["name"], "; ".join(errors)))
            passed += 1
        else:
            print("FAIL %-42s dtype %s: %s exited with %d\n%s"
                  % (case["name"], case["dtype"], step, rc, out))
            failed += 1
    if compile_times:
        print("compile time per kernel (attnc --emit=%s%s): median %.2f s, max %.2f s"
              % ("obj" if args.runner == "cross" else "so",
                 "" if args.runner == "cross" else ", incl. linking",
                 sorted(compile_times)[len(compile_times) // 2], max(compile_times)))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
