#!/usr/bin/env python3
"""Runs attnc kernel objects built for another architecture under an emulator, on .npy
inputs, and compares with .npy reference outputs.

For targets this machine cannot run (aarch64-neon): the runtime is compiled for the target
with its cross compiler (lib/Runtime, once per work directory), raw_runner.c is linked
statically with the kernels' objects and that runtime (one runner for a whole matrix:
compiled_check.py --runner cross links once per target), and the emulator
(qemu-aarch64-static) runs it on the inputs `attnc-run --reference -o DIR` wrote; the check is
device_run.py's: |got - ref| <= atol + rtol * |ref| per element, infinities matching exactly.
As a command: one kernel object, linked into a runner of its own.
"""
import argparse
import contextlib
import io
import os
import shlex
import subprocess
import sys

import numpy as np

from device_run import DTYPES, compare_outputs

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


class CrossError(Exception):
    """A step that failed: its command line and output."""


def check_call(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode:
        raise CrossError("%s\n%s" % (" ".join(map(shlex.quote, cmd)), proc.stdout))
    return proc.stdout


def include_dirs(work, halide_include):
    """attnc's headers, Halide's runtime header and DLPack's (whose /usr/include the cross
    compiler does not search, so it gets a directory of its own)."""
    dlpack = os.path.join(work, "dlpack-include")
    if not os.path.exists(os.path.join(dlpack, "dlpack")):
        os.makedirs(dlpack, exist_ok=True)
        os.symlink("/usr/include/dlpack", os.path.join(dlpack, "dlpack"))
    return ["-I", os.path.join(ROOT, "include"), "-I", halide_include, "-I", dlpack]


def cross_runtime(cxx, work, includes):
    """libattnc_runtime.a for the target: lib/Runtime/*.cpp with the flags of its CMake
    target (C++17, PIC, hidden internals); built again when a source or header of the
    runtime is newer than it (a work directory outlives an edit of the runtime)."""
    lib = os.path.join(work, "libattnc_runtime.a")
    src = os.path.join(ROOT, "lib", "Runtime")
    sources = [os.path.join(d, f) for d in (src, os.path.join(ROOT, "include", "attnc", "Runtime"))
               for f in os.listdir(d)]
    if os.path.exists(lib) and os.path.getmtime(lib) >= max(map(os.path.getmtime, sources)):
        return lib
    objects = []
    for name in sorted(f for f in os.listdir(src) if f.endswith(".cpp")):
        obj = os.path.join(work, "runtime-" + name[:-4] + ".o")
        check_call([cxx, "-std=c++17", "-O2", "-fPIC", "-fvisibility=hidden",
                    "-fvisibility-inlines-hidden"] + includes +
                   ["-c", os.path.join(src, name), "-o", obj])
        objects.append(obj)
    check_call([cxx.replace("g++", "ar"), "rcs", lib] + objects)
    return lib


def link_runner(cxx, work, halide_include, kernels, runner):
    """Links raw_runner.c statically with KERNELS [(symbol, object)] and the target's runtime
    into RUNNER, with a table (RUNNER.kernels) that finds each kernel by its symbol."""
    os.makedirs(work, exist_ok=True)
    includes = include_dirs(work, halide_include)
    runtime = cross_runtime(cxx, work, includes)
    table = os.path.abspath(runner + ".kernels")
    with open(table, "w") as f:
        f.writelines("X(%s)\n" % symbol for symbol, _ in kernels)
    check_call([cxx, "-static", "-O1", '-DKERNEL_TABLE="%s"' % table] + includes +
               ["-x", "c", os.path.join(HERE, "raw_runner.c"), "-x", "none"] +
               list(dict.fromkeys(obj for _, obj in kernels)) + [runtime, "-lm", "-lpthread", "-o", runner])


def run_kernel(emulator, runner, kernel, directory, dtype, layout, lse, rtol, atol):
    """Runs KERNEL of RUNNER under EMULATOR on DIRECTORY's inputs and compares its outputs with
    the reference there: (ok, what the runner and the comparison printed). Raises CrossError
    when the runner fails."""
    code, bits, storage = DTYPES[dtype]
    load = lambda name, t=storage: np.ascontiguousarray(
        np.load(os.path.join(directory, name + ".npy")).astype(t))
    q, k, v = load("q"), load("k"), load("v")
    for name, array in (("q", q), ("k", k), ("v", v)):
        array.tofile(os.path.join(directory, name + ".bin"))
    bshd = layout == "bshd"
    b, hq, sq, d = (q.shape[0], q.shape[2], q.shape[1], q.shape[3]) if bshd else q.shape
    hkv, skv = (k.shape[2], k.shape[1]) if bshd else (k.shape[1], k.shape[2])
    text = io.StringIO()
    text.write(check_call(shlex.split(emulator) + [runner, kernel, directory] + [
        str(x) for x in (b, hq, sq, b, hkv, skv, d, int(bshd), code, bits, int(lse))]))
    got = lambda name, t: np.fromfile(os.path.join(directory, name + ".bin"), dtype=t)
    with contextlib.redirect_stdout(text):
        ok = compare_outputs(directory, dtype, got("out", storage).reshape(q.shape),
                             got("lse", np.float32) if lse else None, rtol, atol)
    return ok, text.getvalue().strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--obj", required=True, help="the kernel (attnc --emit=obj)")
    parser.add_argument("--kernel", required=True, help="its symbol")
    parser.add_argument("--dir", required=True, help="q, k, v, out, lse .npy (attnc-run -o)")
    parser.add_argument("--dtype", required=True, choices=sorted(DTYPES))
    parser.add_argument("--layout", required=True, choices=["bhsd", "bshd"])
    parser.add_argument("--lse", action="store_true", help="the kernel outputs lse")
    parser.add_argument("--cxx", required=True, help="the target's C++ cross compiler")
    parser.add_argument("--emulator", required=True, help="command that runs target binaries")
    parser.add_argument("--halide-include", required=True, help="HalideRuntime.h's directory")
    parser.add_argument("--work", required=True, help="where the runtime is built once")
    parser.add_argument("--rtol", type=float, required=True)
    parser.add_argument("--atol", type=float, required=True)
    args = parser.parse_args()
    try:
        runner = os.path.join(args.dir, "raw_runner")
        link_runner(args.cxx, args.work, args.halide_include, [(args.kernel, args.obj)], runner)
        ok, text = run_kernel(args.emulator, runner, args.kernel, args.dir, args.dtype,
                              args.layout, args.lse, args.rtol, args.atol)
    except CrossError as error:
        sys.exit(str(error))
    print(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
