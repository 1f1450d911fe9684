#!/usr/bin/env python3
"""Runs the numeric matrix through attnc's compiled CPU kernels.

For each case of matrix.json, every dtype: a kernel named after the case in one spec of them
all, built by one `attnc --emit=so --backend B --target T` (T may be a multi-target list);
each case runs its kernel with
`attnc-run --so --kernel CASE` on seeded inputs, and attnc-run compares every
output with the reference evaluator under the matrix's tolerance for the case's dtype
(matrix.json "tolerances"; f32: rtol 2e-5, atol 2e-6: f32 accumulation over tiles and a
polynomial exp, against a double reference; f16 / bf16 also round q, k, v and out). A kernel
that does not compile fails the run (attnc's diagnostic names it). The `weights` output is
compiled by the mlir backend for one target, run through attnc-run (whose comparison covers
it, with lse's tolerance); elsewhere it is left out of the compiled spec. With --weights, every case outputs
weights too (bounded by max_seq = its lengths where it gives none).

With --backward, every case becomes a backward kernel (outputs = [dq, dk, dv]) whose
gradients attnc-run compares with the reference's under matrix.json's "backward_tolerances"
(and those of the f32 tables the mods read: d_<name>).

With --compile-only (a target this machine cannot run), the spec is compiled to an object and
each case reported BUILT, nothing is run, and the closing line says so: what such a machine can check.

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


def write_reference(args, case, spec, size, directory):
    """Writes the case's inputs and reference outputs as .npy into `directory` (attnc-run
    --reference), unless an earlier run wrote them there for the same case and sizes (the
    targets of one test share a --references directory): (exit status, output)."""
    stamp = os.path.join(directory, "made-for.txt")
    made_for = attnc_matrix.spec_text(case) + " ".join(size)
    if os.path.exists(stamp):
        with open(stamp) as f:
            if f.read() == made_for:
                return 0, ""
    rc, out = run([args.attnc_run, spec, "--reference", "-o", directory] + size)
    if rc == 0:
        with open(stamp, "w") as f:
            f.write(made_for)
    return rc, out


def run_one(args, case, directory, spec, so, tol):
    """Runs one compiled case: (exit status, output, the step that gave them). With --runner
    cross, only writes the inputs and the reference (into `directory`): run_cross runs every
    case at once."""
    size = ["--kernel", case["name"], "--batch", str(case["batch"]), "--seq-q",
            str(case["seq_q"]), "--seq-kv", str(case["seq_kv"]), "--seed", "5"]
    if "kv_lens" in case:
        size += ["--kv-lens", case["kv_lens"]]
    if "seq_lens" in case:
        size += ["--seq-lens", case["seq_lens"]]
    inputs = []
    for name, path in attnc_matrix.write_inputs(case, directory):
        inputs += ["--input", "%s=%s" % (name, path)]
    size += inputs
    tolerance = ["--rtol", str(tol["rtol"])] + (["--atol", str(tol["atol"])] if "atol" in tol
                                                else [])
    if args.runner in ("cross", "device"):
        # attnc-run writes the inputs and the reference; the kernel runs in another process.
        rc, out = write_reference(args, case, spec, size, directory)
        if rc or args.runner == "cross":
            return rc, out, "attnc-run --reference"
        rc, out = run([sys.executable, os.path.join(HERE, "device_run.py"), "--so", so,
                       "--kernel", case["name"], "--dir", directory,
                       "--dtype", case["dtype"]] + (["--lse"] if "lse" in case["outputs"] else [])
                      + inputs + tolerance)
        return rc, out, "device_run.py"
    cmd = [args.attnc_run, spec, "--so", so, "--num-threads", "2", "--repeat", "1",
           "--no-peak"] + size + tolerance
    if args.python_replay:
        cmd += ["-o", directory]  # the call's inputs and outputs, for python_run.replay
    variants = [v for v in args.force_variants.split(",") if v]
    if not variants:
        rc, out = run(cmd)
        if rc or not args.python_replay:
            return rc, out, "attnc-run --so"
        import python_run  # NumPy, ml_dtypes and the package: only the replay needs them
        ok, line = python_run.replay(so, case, directory, threads=2)
        return (0 if ok else 1), out + line + "\n", "the Python package's call"
    for variant in variants:
        rc, out = run_forced(cmd, variant)
        if rc:
            break
    return rc, out, "attnc-run --so with ATTNC_TARGET=" + variant


def run_cross(args, ready):
    """--runner cross: links one runner for the target with every case's object (one link,
    not one per case) and runs each case under the emulator: [(exit status, output)]."""
    import cross_run  # NumPy: only this runner compares in this process
    runner = os.path.join(args.work, "raw_runner")
    try:
        cross_run.link_runner(args.cross_cxx,
                              args.cross_runtime or os.path.join(args.work, "cross-runtime"),
                              args.halide_include,
                              [(c["name"], obj, cross_run.entry_tensors(c))
                               for c, _, obj, _ in ready], runner)
    except cross_run.CrossError as error:
        return [(1, "linking the runner: %s" % error)] * len(ready)
    results = []
    for case, directory, _, tol in ready:
        try:
            ok, out = cross_run.run_kernel(args.emulator, runner, case, directory, tol["rtol"],
                                           tol["atol"])
            results.append((0 if ok else 1, out))
        except cross_run.CrossError as error:
            results.append((1, str(error)))
    return results


def group_spec(args, group, emit):
    """Writes each case's own spec (WORK/CASE/spec.mlir: to compile or run it alone) and, for
    a group of several, the spec of all (WORK/matrix.mlir): (the group's spec, its output)."""
    specs = [attnc_matrix.write_spec(case, args.work)[1] for case in group]
    if len(group) == 1:
        return specs[0], os.path.join(os.path.dirname(specs[0]), "kernel." + emit)
    spec = attnc_matrix.write_matrix_spec(group, os.path.join(args.work, "matrix.mlir"))
    return spec, os.path.join(args.work, "matrix." + emit)


def report(case, rc, out, step):
    """Prints the case's PASS line with its errors, or FAIL with the step's output."""
    errors = [l.strip() for l in out.splitlines() if "max abs err" in l or "bit for bit" in l]
    if rc == 0:
        print("PASS %-42s %s" % (case["name"], "; ".join(errors)))
    else:
        print("FAIL %-42s dtype %s: %s exited with %d\n%s"
              % (case["name"], case["dtype"], step, rc, out))
    return rc == 0


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
                             "process on attnc-run's .npy files, or cross_run.py's runner (one "
                             "for every object of the target, under --emulator)")
    parser.add_argument("--python-replay", action="store_true",
                        help="with --runner attnc-run: then call each case's kernel through "
                             "the Python package on the inputs attnc-run's call used, and "
                             "require the same output bits (python_run.py)")
    parser.add_argument("--compile-only", action="store_true",
                        help="compile every case to an object and run none (for a target "
                             "this machine cannot run)")
    parser.add_argument("--cross-cxx", help="with --runner cross: the target's C++ compiler")
    parser.add_argument("--emulator", help="with --runner cross: runs target binaries")
    parser.add_argument("--cross-runtime", help="with --runner cross: where the target's "
                        "runtime is built (default: WORK/cross-runtime); runs for targets of one "
                        "architecture may share it, built once")
    parser.add_argument("--references", help="with --runner cross or device: where each "
                        "case's inputs and reference outputs go (default: --work), kept for "
                        "a later run with the same case")
    parser.add_argument("--halide-include", help="with --runner cross: HalideRuntime.h's dir")
    parser.add_argument("--matrix", default=attnc_matrix.MATRIX,
                        help="the matrix of cases (default: matrix.json; decode.json: the "
                             "split-KV decode kernels)")
    parser.add_argument("--backward", action="store_true",
                        help="every case as a backward kernel (outputs = [dq, dk, dv]; mlir "
                             "backend, run by attnc-run)")
    parser.add_argument("--weights", action="store_true",
                        help="every case also outputs the attention weights (mlir backend, "
                             "run by attnc-run)")
    args = parser.parse_args()
    if args.python_replay and (args.runner != "attnc-run" or args.force_variants):
        parser.error("--python-replay replays attnc-run's call of a single-target kernel")
    matrix = attnc_matrix.load(args.matrix)
    # Every matrix's backward cases take matrix.json's tolerances.
    backward_tolerances = attnc_matrix.load()["backward_tolerances"]
    # Only the MLIR CPU kernels write weights, and only attnc-run's call passes them; a
    # multi-target object dispatches attention's five tensors.
    keep_weights = (args.backend == "mlir" and args.runner == "attnc-run"
                    and not args.compile_only and "," not in args.target)
    if args.weights and not keep_weights:
        parser.error("--weights needs --backend mlir run by attnc-run")
    if args.backward and (args.weights or args.python_replay or args.backend != "mlir"
                          or args.runner != "attnc-run" or "," in args.target):
        parser.error("--backward needs --backend mlir for one target, run by attnc-run, "
                     "without --weights and --python-replay")
    emit = "obj" if args.runner == "cross" or args.compile_only else "so"
    selected = []
    for case in cases(matrix, args.also_dtypes):
        if args.only and case["name"] not in args.only.split(","):
            continue
        if case["dtype"] not in args.dtypes:
            continue
        if args.backward:
            case["outputs"] = ["dq", "dk", "dv"]
        elif not keep_weights:
            case["outputs"] = [o for o in case["outputs"] if o != "weights"]
        elif args.weights and "weights" not in case["outputs"]:
            case["outputs"].append("weights")
            case.setdefault("max_seq", [case["seq_q"], case["seq_kv"]])
        selected.append(case)
    # One spec of every case's kernel, compiled by one attnc: its kernels compile on the
    # machine's cores, and those with the same tile code share one (docs/Tools.md), where a
    # process per case paid attnc's start and a link each (the matrix compiled in 2.2x less
    # time). A case's diagnostics name its kernel.
    start = time.monotonic()
    spec, so = group_spec(args, selected, emit)
    rc, out = run([args.attnc, spec, "--backend", args.backend, "--target", args.target,
                   "--emit=" + emit, "-o", so] +
                  (["--schedule", args.schedule] if args.schedule else []))
    if rc:
        print("FAIL %s: attnc --emit=%s exited with %d\n%s"
              % (", ".join(c["name"] for c in selected), emit, rc, out))
        return 1
    seconds = time.monotonic() - start
    passed = failed = 0
    ready = []
    for case in selected:
        directory = os.path.join(args.references or args.work, case["name"], "reference")
        tol = (backward_tolerances if args.backward else matrix["tolerances"])[case["dtype"]]
        if args.compile_only:
            print("BUILT %s" % case["name"])
            passed += 1
            continue
        rc, out, step = run_one(args, case, directory, spec, so, tol)
        if rc == 0 and args.runner == "cross":
            ready.append((case, directory, so, tol))
        elif report(case, rc, out, step):
            passed += 1
        else:
            failed += 1
    if ready:
        for (case, *_), (rc, out) in zip(ready, run_cross(args, ready)):
            if report(case, rc, out, "raw_runner under " + args.emulator):
                passed += 1
            else:
                failed += 1
    print("compile time: %d kernels in %.1f s (attnc --emit=%s%s)"
          % (len(selected), seconds, emit, "" if emit == "obj" else ", incl. linking"))
    if args.compile_only:
        print("%d built, %d failed; none run (--compile-only)" % (passed, failed))
    else:
        print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
