#!/usr/bin/env python3
"""Runs attnc kernel objects built for another architecture under an emulator, on .npy
inputs, and compares with .npy reference outputs.

For targets this machine cannot run (aarch64-neon): the runtime is compiled for the target
with its cross compiler (lib/Runtime, once per work directory), raw_runner.c is linked
statically with the kernels' objects and that runtime (one runner for a whole matrix:
compiled_check.py --runner cross links once per target), and the emulator
(qemu-aarch64) runs it on the inputs `attnc-run --reference -o DIR` wrote; the check is
device_run.py's: |got - ref| <= atol + rtol * |ref| per element, infinities matching exactly.
As a command: one kernel object, linked into a runner of its own.
"""
import argparse
import contextlib
import io
import json
import os
import shlex
import subprocess
import sys

import numpy as np

from attnc._abi import K_DL_FLOAT
from device_run import DTYPES, K_DL_INT, compare_outputs

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


class CrossError(Exception):
    """A step that failed: its command line and output."""


def check_call(cmd, env=None):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=env)
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


def entry_tensors(case):
    """How many DLTensors a case's kernel entry takes: q, k, v, out, lse, then kv_lens and a
    block table (kv_cache), or the two offsets (varlen) and with kv_cache = lengths kv_lens,
    then the tensors the mods read (inputs; raw_runner.c takes at most 10 tensors)."""
    cache, inputs = case.get("kv_cache"), len(case.get("mod_inputs", []))
    if case.get("varlen"):
        return (8 if cache else 7) + inputs
    if cache and cache != "lengths":
        return 7 + inputs
    return (6 if cache else 5) + inputs


def preload_of(runner):
    """The host library the emulator preloads when it runs RUNNER (qemu_vzeroupper.c: why)."""
    return runner + "-vzeroupper.so"


def link_runner(cxx, work, halide_include, kernels, runner):
    """Links raw_runner.c statically with KERNELS [(symbol, object, entry tensors)] and the
    target's runtime into RUNNER, with a table (RUNNER.kernels) that finds each kernel by its
    symbol and calls it with its arguments; and its preload_of."""
    os.makedirs(work, exist_ok=True)
    includes = include_dirs(work, halide_include)
    runtime = cross_runtime(cxx, work, includes)
    table = os.path.abspath(runner + ".kernels")
    with open(table, "w") as f:
        f.writelines("X(%s, %d)\n" % (symbol, tensors) for symbol, _, tensors in kernels)
    check_call([cxx, "-static", "-O1", '-DKERNEL_TABLE="%s"' % table] + includes +
               ["-x", "c", os.path.join(HERE, "raw_runner.c"), "-x", "none"] +
               list(dict.fromkeys(obj for _, obj, _ in kernels)) +
               [runtime, "-lm", "-lpthread", "-o", runner])
    check_call([os.environ.get("ATTNC_HOST_CC", "cc"), "-O2", "-shared", "-fPIC",
                os.path.join(HERE, "qemu_vzeroupper.c"), "-ldl", "-o", preload_of(runner)])


def to_pages(kv, lengths, page, layout, head_major=False):
    """k or v (the spec's layout) as the pages [num_pages, page, kv_heads, d] (head_major:
    [num_pages, kv_heads, page, d]) that lengths.json's block table names (attnc-run's
    toPages)."""
    token_major = kv if layout == "bshd" else kv.transpose(0, 2, 1, 3)  # [b, s, h, d]
    table = np.array(lengths["block_table"], np.int64)
    pages = np.zeros((lengths["num_pages"], page) + token_major.shape[2:], kv.dtype)
    for b in range(kv.shape[0]):
        for s in range(token_major.shape[1]):
            pages[table[b, s // page], s % page] = token_major[b, s]
    return np.ascontiguousarray(pages.transpose(0, 2, 1, 3)) if head_major else pages


def pack(padded, lens):
    """Sequence b's first lens[b] rows of a bshd [batch, seq, heads, d] array, end to end."""
    return np.ascontiguousarray(np.concatenate([padded[b, :n] for b, n in enumerate(lens)]))


def offsets(lens):
    return np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)


def entry_arguments(case, directory, q, k, v, lse):
    """[(name, array, role)] of the kernel's entry in order, for the reference inputs q, k, v
    (the spec's layout, padded): with a kv_cache its lengths and pages, with varlen packed
    sequences and their offsets, as attnc-run built them (DIR/lengths.json)."""
    lengths = {}
    if case.get("kv_cache") or case.get("varlen"):
        with open(os.path.join(directory, "lengths.json")) as f:
            lengths = json.load(f)
    out_shape, lse_shape = q.shape, (q.shape[0], case["heads"], q.shape[2 if case["layout"] == "bhsd" else 1])
    extra = []
    if case.get("varlen"):
        q, k, v = pack(q, lengths["q_lens"]), pack(k, lengths["kv_lens"]), pack(v, lengths["kv_lens"])
        out_shape, lse_shape = q.shape, (case["heads"], q.shape[0])
        extra = [("cu_seqlens_q", offsets(lengths["q_lens"]), "in"),
                 ("cu_seqlens_kv", offsets(lengths["kv_lens"]), "in")]
        if "kv_used" in lengths:  # kv_cache = lengths: the keys each sequence uses
            extra.append(("kv_lens", np.array(lengths["kv_used"], np.int32), "in"))
    elif case.get("kv_cache"):
        extra = [("kv_lens", np.array(lengths["kv_lens"], np.int32), "in")]
        if case["kv_cache"] != "lengths":
            form = case["kv_cache"][len("paged<"):-1].split(",")  # "N" or "N, hnd"
            k, v = (to_pages(a, lengths, int(form[0]), case["layout"],
                             form[-1].strip() == "hnd") for a in (k, v))
            extra.append(("block_table", np.array(lengths["block_table"], np.int32), "in"))
    for name in case.get("mod_inputs", []):  # what the mods read (attnc_matrix.write_inputs)
        extra.append((name, np.load(os.path.join(directory, "input_%s.npy" % name)), "in"))
    return ([("q", q, "in"), ("k", k, "in"), ("v", v, "in"),
             ("out", np.zeros(out_shape, q.dtype), "out"),
             ("lse", np.zeros(lse_shape, np.float32), "out" if lse else "null")] + extra,
            lengths)


def write_call(directory, arguments, code, bits):
    """DIR/call.txt (raw_runner's argument list) and each input as DIR/NAME.bin."""
    with open(os.path.join(directory, "call.txt"), "w") as f:
        for name, array, role in arguments:
            kind = ((code, bits) if name in ("q", "k", "v", "out") else
                    (K_DL_INT, 32) if array.dtype == np.int32 else (K_DL_FLOAT, 32))
            f.write("%s %d %d %d %s %s\n" % (name, kind[0], kind[1], array.ndim,
                                             " ".join(map(str, array.shape)), role))
            if role == "in":
                np.ascontiguousarray(array).tofile(os.path.join(directory, name + ".bin"))


def unpack(packed, lens, seq, fill):
    """Packed rows [total, ...] back to [batch, seq, ...], `fill` past each sequence."""
    padded = np.full((len(lens), seq) + packed.shape[1:], fill, packed.dtype)
    for b, (first, n) in enumerate(zip(offsets(lens), lens)):
        padded[b, :n] = packed[first:first + n]
    return padded


def run_kernel(emulator, runner, case, directory, rtol, atol):
    """Runs the case's kernel in RUNNER under EMULATOR on DIRECTORY's inputs and compares its
    outputs with the reference there: (ok, what the runner and the comparison printed).
    Raises CrossError when the runner fails."""
    code, bits, storage = DTYPES[case["dtype"]]
    load = lambda name, t=storage: np.ascontiguousarray(
        np.load(os.path.join(directory, name + ".npy")).astype(t))
    q, k, v = load("q"), load("k"), load("v")
    lse = "lse" in case["outputs"]
    arguments, lengths = entry_arguments(case, directory, q, k, v, lse)
    write_call(directory, arguments, code, bits)
    text = io.StringIO()
    # ATTNC_CPU_FEATURES (lit's ATTNC_LIT_CPU_FLAGS) describes this x86 machine, not the
    # emulated CPU, whose features the runner's runtime detects itself.
    env = {k: v for k, v in os.environ.items() if k != "ATTNC_CPU_FEATURES"}
    env["LD_PRELOAD"] = preload_of(runner)
    text.write(check_call(shlex.split(emulator) + [runner, case["name"], directory], env))
    shapes = {name: array.shape for name, array, _ in arguments}
    got = lambda name, t: np.fromfile(os.path.join(directory, name + ".bin"),
                                      dtype=t).reshape(shapes[name])
    out = got("out", storage)
    lse_out = got("lse", np.float32) if lse else None
    if case.get("varlen"):  # packed: back to the reference's padded form
        seq_q = q.shape[1]
        out = unpack(out, lengths["q_lens"], seq_q, 0)
        if lse:
            lse_out = unpack(lse_out.T, lengths["q_lens"], seq_q, -np.inf).transpose(0, 2, 1)
    with contextlib.redirect_stdout(text):
        ok = compare_outputs(directory, case["dtype"], out, lse_out, rtol, atol)
    return ok, text.getvalue().strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--obj", required=True, help="the kernel (attnc --emit=obj)")
    parser.add_argument("--kernel", required=True, help="its symbol")
    parser.add_argument("--dir", required=True, help="q, k, v, out, lse .npy (attnc-run -o)")
    parser.add_argument("--dtype", required=True, choices=sorted(DTYPES))
    parser.add_argument("--layout", required=True, choices=["bhsd", "bshd"])
    parser.add_argument("--lse", action="store_true", help="the kernel outputs lse")
    parser.add_argument("--heads", type=int, required=True, help="its query heads")
    parser.add_argument("--cxx", required=True, help="the target's C++ cross compiler")
    parser.add_argument("--emulator", required=True, help="command that runs target binaries")
    parser.add_argument("--halide-include", required=True, help="HalideRuntime.h's directory")
    parser.add_argument("--work", required=True, help="where the runtime is built once")
    parser.add_argument("--rtol", type=float, required=True)
    parser.add_argument("--atol", type=float, required=True)
    args = parser.parse_args()
    case = {"name": args.kernel, "dtype": args.dtype, "layout": args.layout,
            "heads": args.heads, "outputs": ["out", "lse"] if args.lse else ["out"]}
    try:
        runner = os.path.join(args.dir, "raw_runner")
        link_runner(args.cxx, args.work, args.halide_include, [(args.kernel, args.obj, 5)],
                    runner)
        ok, text = run_kernel(args.emulator, runner, case, args.dir, args.rtol, args.atol)
    except CrossError as error:
        sys.exit(str(error))
    print(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
