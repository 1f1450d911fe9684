#!/usr/bin/env python3
"""Runs one attnc kernel object built for another architecture under an emulator, on .npy
inputs, and compares with .npy reference outputs.

For targets this machine cannot run (aarch64-neon): the runtime is compiled for the target
with its cross compiler (lib/Runtime, once per work directory), raw_runner.c is linked
statically with the kernel's object and that runtime, and the emulator (qemu-aarch64-static)
runs it on the inputs `attnc-run --reference -o DIR` wrote; the check is device_run.py's:
|got - ref| <= atol + rtol * |ref| per element, infinities matching exactly.
"""
import argparse
import os
import shlex
import subprocess
import sys

import numpy as np

from device_run import DTYPES, as_float64, compare

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def check_call(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode:
        sys.exit("%s\n%s" % (" ".join(map(shlex.quote, cmd)), proc.stdout))
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
    target (C++17, PIC, hidden internals)."""
    lib = os.path.join(work, "libattnc_runtime.a")
    if os.path.exists(lib):
        return lib
    src = os.path.join(ROOT, "lib", "Runtime")
    objects = []
    for name in sorted(f for f in os.listdir(src) if f.endswith(".cpp")):
        obj = os.path.join(work, "runtime-" + name[:-4] + ".o")
        check_call([cxx, "-std=c++17", "-O2", "-fPIC", "-fvisibility=hidden",
                    "-fvisibility-inlines-hidden"] + includes +
                   ["-c", os.path.join(src, name), "-o", obj])
        objects.append(obj)
    check_call([cxx.replace("g++", "ar"), "rcs", lib] + objects)
    return lib


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
    code, bits, storage = DTYPES[args.dtype]
    os.makedirs(args.work, exist_ok=True)
    includes = include_dirs(args.work, args.halide_include)
    runtime = cross_runtime(args.cxx, args.work, includes)
    runner = os.path.join(args.dir, "raw_runner")
    check_call([args.cxx, "-static", "-O1", "-DKERNEL=" + args.kernel] + includes +
               ["-x", "c", os.path.join(HERE, "raw_runner.c"), "-x", "none", args.obj, runtime,
                "-lm", "-lpthread", "-o", runner])

    load = lambda name, t=storage: np.ascontiguousarray(
        np.load(os.path.join(args.dir, name + ".npy")).astype(t))
    q, k, v = load("q"), load("k"), load("v")
    for name, array in (("q", q), ("k", k), ("v", v)):
        array.tofile(os.path.join(args.dir, name + ".bin"))
    bshd = args.layout == "bshd"
    b, hq, sq, d = (q.shape[0], q.shape[2], q.shape[1], q.shape[3]) if bshd else q.shape
    hkv, skv = (k.shape[2], k.shape[1]) if bshd else (k.shape[1], k.shape[2])
    out = check_call(shlex.split(args.emulator) + [runner, args.dir] + [str(x) for x in (
        b, hq, sq, b, hkv, skv, d, int(bshd), code, bits, int(args.lse))])
    print(out.strip())
    has_out = os.path.exists(os.path.join(args.dir, "out.npy"))
    got = np.fromfile(os.path.join(args.dir, "out.bin"), dtype=storage).reshape(q.shape)
    ok = not has_out or compare("out", as_float64(got, args.dtype),
                                as_float64(load("out"), args.dtype), args.rtol, args.atol)
    if args.lse:
        lse = np.fromfile(os.path.join(args.dir, "lse.bin"), dtype=np.float32)
        ref = load("lse", np.float32)
        ok = compare("lse", lse.reshape(ref.shape).astype(np.float64), ref.astype(np.float64),
                     args.rtol, args.atol) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
