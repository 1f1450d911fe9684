#!/usr/bin/env python3
"""What a kernel call from Python costs over the same call from C.

A tiny kernel (1 head, head_dim 16, 1 query against 4 keys, f32, one thread: the launch is
nearly all of its time) compiled by attnc.compile. In each round, interleaved so that the
machine's drift hits every row alike: `calls` launches from C (time_calls.c: attnc_rt_run on
DLTensors built once), then the same number through the package with NumPy arrays (outputs
passed as out=, then allocated by the package) and, where torch imports, with torch tensors.
Prints the median and best microseconds per call over the rounds and each Python row's
overhead over C (median - median, best - best).

    benchmarks/.venv/bin/python benchmarks/python/call_overhead.py   # 31 rounds of 2000 calls
    .venv/bin/python benchmarks/python/call_overhead.py --rounds 3 --calls 50   # no torch rows

Both venvs hold the package (scripts/setup.sh and benchmarks/peers/install.sh install it).
"""
import argparse
import ctypes
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
import attnc
from attnc import _abi
from attnc._dlpack import Borrowed

SPEC = """
attn.kernel @tiny {
  attn.attention {num_heads = 1, num_kv_heads = 1, head_dim = 16, dtype = f32, layout = bhsd,
                  mask = #attn.full, outputs = [out, lse]}
}
"""


def c_timer(work):
    """time_calls.c built into WORK and loaded: attnc_time_calls."""
    so = os.path.join(work, "time_calls.so")
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-I", os.path.join(ROOT, "include"),
                    os.path.join(HERE, "time_calls.c"), "-o", so], check=True)
    fn = ctypes.CDLL(so).attnc_time_calls
    fn.restype = ctypes.c_double
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
    return fn


def rows(tiny, timer, calls):
    """{row: a function timing `calls` calls, returning seconds}."""
    kernel = tiny.kernel
    q = np.random.default_rng(0).standard_normal((1, 1, 1, 16), np.float32)
    k = np.random.default_rng(1).standard_normal((1, 1, 4, 16), np.float32)
    out, lse = np.empty_like(q), np.empty((1, 1, 1), np.float32)
    keep = [Borrowed(a, n) for a, n in ((q, "q"), (k, "k"), (k, "v"), (out, "out"), (lse, "lse"))]
    args = (ctypes.POINTER(_abi.DLTensor) * 5)(*(b.pointer() for b in keep))

    def c_calls():
        seconds = timer(kernel._run_address, kernel._desc_address, ctypes.addressof(args), 1,
                        calls)
        if seconds < 0:
            sys.exit("the kernel returned %d" % -seconds)
        return seconds

    def python(*arrays, **outputs):
        def run():
            start = time.perf_counter()
            for _ in range(calls):
                tiny(*arrays, num_threads=1, **outputs)
            return time.perf_counter() - start
        return run

    table = {"C (attnc_rt_run)": c_calls,
             "Python, NumPy, out=": python(q, k, k, out=out, lse=lse),
             "Python, NumPy, outputs allocated": python(q, k, k)}
    try:
        import torch
    except ImportError:
        return table, keep
    tq, tk = torch.from_numpy(q), torch.from_numpy(k)
    table["Python, torch, out="] = python(tq, tk, tk, out=torch.from_numpy(out),
                                          lse=torch.from_numpy(lse))
    table["Python, torch, outputs allocated"] = python(tq, tk, tk)
    return table, keep


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=31)
    parser.add_argument("--calls", type=int, default=2000, help="calls per row per round")
    parser.add_argument("--attnc", help="the compiler (default: attnc.compile's search)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        tiny = attnc.compile(SPEC, cache=os.path.join(work, "cache"), attnc=args.attnc).tiny
        table, _keep = rows(tiny, c_timer(work), args.calls)
        samples = {name: [] for name in table}
        for _ in range(args.rounds):
            for name, run in table.items():
                samples[name].append(run() / args.calls * 1e6)
    print("call overhead: %d rounds of %d calls; %s; C launch path: %s"
          % (args.rounds, args.calls, tiny.kernel.target,
             "attnc._call" if attnc._kernel._call else "ctypes (attnc._call not built)"))
    c = sorted(samples["C (attnc_rt_run)"])
    c_median, c_best = c[len(c) // 2], c[0]
    print("%-34s %12s %10s %20s" % ("row", "median us", "best us", "over C: median, best"))
    for name, times in samples.items():
        times.sort()
        median, best = times[len(times) // 2], times[0]
        over = "" if name.startswith("C ") else "%+9.2f %+9.2f" % (median - c_median, best - c_best)
        print("%-34s %12.2f %10.2f %20s" % (name, median, best, over))


if __name__ == "__main__":
    main()
