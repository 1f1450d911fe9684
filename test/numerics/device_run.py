#!/usr/bin/env python3
"""Runs one compiled attnc kernel on .npy inputs and compares with .npy reference outputs.

The process that runs a GPU-schedule kernel on PoCL must hold no second LLVM: PoCL brings
LLVM 15 through the OpenCL ICD, and LLVM-based libraries of different versions in one process
can bind each other's symbols (DESIGN.md section 10). attnc-run links libMLIR, so it writes the
inputs and the reference outputs (`attnc-run --reference -o DIR`), and this runner, which
loads only NumPy and the kernel's shared object, calls the kernel through its C ABI (DLPack,
attnc_runtime.h) and checks |got - ref| <= atol + rtol * |ref| per element, as attnc-run does
(infinities must match exactly).
"""
import argparse
import ctypes
import os
import subprocess
import sys

import numpy as np

from attnc._abi import (K_DL_BFLOAT, K_DL_CPU, K_DL_CUDA, K_DL_FLOAT, K_DL_INT, DLDataType,
                        DLDevice, DLTensor, Options)


DTYPES = {"f32": (K_DL_FLOAT, 32, np.float32), "f16": (K_DL_FLOAT, 16, np.float16),
          "bf16": (K_DL_BFLOAT, 16, np.uint16)}


def tensor(array, code, bits, device=K_DL_CPU):
    """A DLTensor over a C-contiguous host array (kept alive by the caller)."""
    shape = (ctypes.c_int64 * array.ndim)(*array.shape)
    t = DLTensor(array.ctypes.data_as(ctypes.c_void_p), DLDevice(device, 0), array.ndim,
                 DLDataType(code, bits, 1), shape, None, 0)
    t._keep = (array, shape)
    return t


def host_tensor(array, device=K_DL_CPU):
    """A DLTensor over a float32 array, or an integer one (lengths, offsets, tables) as
    kDLInt of its width."""
    if array.dtype == np.float32:
        return tensor(array, K_DL_FLOAT, 32, device)
    return tensor(array, K_DL_INT, array.dtype.itemsize * 8, device)


def build_so(attnc, specs, target, work, stem):
    """Compiles the kernels of `specs` (spec text) for `target` into WORK/STEM.so with one
    attnc run; returns it loaded, with attnc_last_error's text as bytes."""
    os.makedirs(work, exist_ok=True)
    spec = os.path.join(work, stem + ".mlir")
    with open(spec, "w") as f:
        f.write(specs)
    so = os.path.join(work, stem + ".so")
    subprocess.run([attnc, spec, "--target", target, "--emit=so", "-o", so], check=True)
    library = ctypes.CDLL(os.path.abspath(so))
    library.attnc_last_error.restype = ctypes.c_char_p
    return library


def check_parser(doc):
    """The options of the C-entry checks (paged_check.py, varlen_check.py, ...): the attnc
    to compile with, its target and a work directory."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--attnc", required=True)
    parser.add_argument("--target", required=True)
    parser.add_argument("--work", required=True)
    return parser


def report(name, ok, detail="", width=40):
    """Prints a PASS / FAIL line; returns ok."""
    print("%s %-*s %s" % ("PASS" if ok else "FAIL", width, name, detail))
    return ok


def run_tool(cmd):
    """Runs one of attnc's tools; exits with its output if it fails."""
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), proc.stdout))


def call_f32(entry, q, k, v):
    """Runs an f32 kernel with outputs [out, lse] through its C entry `entry` (ctypes) on
    1 thread; returns (out, lse) as float32 arrays. Exits on a non-zero status."""
    out, lse = np.zeros_like(q), np.zeros(q.shape[:3], np.float32)
    ts = [tensor(a, K_DL_FLOAT, 32) for a in (q, k, v, out, lse)]
    rc = entry(*(ctypes.byref(t) for t in ts), ctypes.byref(Options(1, None)))
    if rc:
        sys.exit("kernel returned %d" % rc)
    return out, lse


def as_float64(array, dtype):
    if dtype == "bf16":  # raw bits, as attnc-run writes them
        return (array.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return array.astype(np.float64)


def compare(name, got, ref, rtol, atol):
    inf = np.isinf(ref) | np.isinf(got)
    bad_inf = inf & ~(np.isinf(ref) & np.isinf(got) & (np.sign(ref) == np.sign(got)))
    finite = ~inf
    with np.errstate(invalid="ignore"):  # inf - inf where both are infinite: judged above
        err = np.abs(got - ref)
    bad = bad_inf | (finite & ~(err <= atol + rtol * np.abs(ref)))
    max_abs = float(err[finite].max()) if finite.any() else 0.0
    print("%s: max abs err %.2e (rtol %.1e, atol %.1e): %s"
          % (name, max_abs, rtol, atol, "MISMATCH" if bad.any() else "ok"))
    if bad.any():
        at = int(np.flatnonzero(bad)[0])
        print("  %d elements off; first at flat index %d: got %.6e, want %.6e"
              % (int(bad.sum()), at, got.flat[at], ref.flat[at]))
    return not bad.any()


def compare_outputs(directory, dtype, out, lse, rtol, atol):
    """Compares a kernel's out (shaped like q) and lse (float32, or None when the kernel has
    none) with DIRECTORY's out.npy and lse.npy; an lse-only spec has no out.npy, and its
    kernel's out is not checked. Prints a line per output; True when all match."""
    ok = True
    if os.path.exists(os.path.join(directory, "out.npy")):
        ref = np.load(os.path.join(directory, "out.npy")).astype(DTYPES[dtype][2])
        ok = compare("out", as_float64(out, dtype), as_float64(ref, dtype), rtol, atol)
    if lse is not None:
        ref = np.load(os.path.join(directory, "lse.npy")).astype(np.float64)
        ok = compare("lse", lse.reshape(ref.shape).astype(np.float64), ref, rtol, atol) and ok
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--so", required=True, help="the kernel (attnc --emit=so)")
    parser.add_argument("--kernel", required=True, help="its symbol")
    parser.add_argument("--dir", required=True, help="q, k, v, out, lse .npy (attnc-run -o)")
    parser.add_argument("--dtype", required=True, choices=sorted(DTYPES))
    parser.add_argument("--lse", action="store_true", help="the kernel outputs lse")
    parser.add_argument("--claim-cuda", action="store_true",
                        help="label the (host) tensors kDLCUDA, --input ones too: on a machine "
                             "without a CUDA driver, shows the error a CUDA kernel returns there")
    parser.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                        help="an argument after lse: a decode kernel's kv_lens and "
                             "block_table, then the mods' inputs in declaration order")
    parser.add_argument("--rtol", type=float, required=True)
    parser.add_argument("--atol", type=float, required=True)
    args = parser.parse_args()
    code, bits, storage = DTYPES[args.dtype]
    load = lambda name, t=storage: np.ascontiguousarray(
        np.load(os.path.join(args.dir, name + ".npy")).astype(t))
    q, k, v = load("q"), load("k"), load("v")
    out = np.zeros_like(q)  # written by every kernel, lse-only ones too
    lse = np.zeros_like(load("lse", np.float32)) if args.lse else None

    library = ctypes.CDLL(os.path.abspath(args.so))
    entry = getattr(library, args.kernel)
    entry.restype = ctypes.c_int
    library.attnc_last_error.restype = ctypes.c_char_p
    device = K_DL_CUDA if args.claim_cuda else K_DL_CPU
    tq, tk, tv, tout = (tensor(a, code, bits, device) for a in (q, k, v, out))
    tlse = tensor(lse, K_DL_FLOAT, 32, device) if args.lse else None
    inputs = [host_tensor(np.ascontiguousarray(np.load(flag.split("=", 1)[1])), device)
              for flag in args.input]
    options = Options(1, None)
    rc = entry(ctypes.byref(tq), ctypes.byref(tk), ctypes.byref(tv), ctypes.byref(tout),
               ctypes.byref(tlse) if tlse else None, *(ctypes.byref(t) for t in inputs),
               ctypes.byref(options))
    if rc != 0:
        print("kernel returned %d: %s" % (rc, library.attnc_last_error().decode()))
        return 1
    return 0 if compare_outputs(args.dir, args.dtype, out, lse, args.rtol, args.atol) else 1


if __name__ == "__main__":
    sys.exit(main())
