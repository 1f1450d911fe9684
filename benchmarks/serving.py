#!/usr/bin/env python3
"""Decode steps, the serving group: attnc's split-KV decode kernel against its own prefill-style
kernel and PyTorch's SDPA, as % of the machine's memory read bandwidth, in one run.

  benchmarks/.venv/bin/python benchmarks/serving.py --out DIR          (peers/install.sh)
  python3 benchmarks/serving.py --quick --out DIR                      (no torch: attnc only)

A decode step reads the whole KV cache, 2 x batch x L x kv_heads x head_dim x bytes, for a few
query rows: its roof is the read bandwidth (attnc-run --bandwidth-peak on the same threads),
not the FMA peak. Rows: batch 1, 32 query heads over 8 KV heads, head_dim 128 (Llama-3-8B),
one query token, KV lengths 4k / 16k / 64k, K and V in f32 and in bf16 (q and out too).
Every peer gets the same inputs, bottom-right causal (for one query token: every key).

Cold: before every timed call the caches are emptied by reading a buffer of twice the last-level
cache (numpy, untimed): a serving step finds its KV cache in memory, not in a cache that held it
since the last call (this machine's 480 MiB L3 holds a 16k-token f32 cache otherwise). Each row
is timed --repeats times per peer, peers interleaved; median and best are reported. Inputs are
allocated on transparent huge pages where the OS gives them (madvise), as attnc-run's and the
probe's are; SDPA's K and V are zero-copy views of the same arrays.

Peers:
  attnc-decode    the spec with num_splits = 0 (auto), compiled for --target / the bf16 target
  attnc-prefill   the same spec without num_splits: the tile-of-query-rows kernel
  torch-sdpa      F.scaled_dot_product_attention(q, k, v, enable_gqa=True) under no_grad
  torch-flex      torch.compile(flex_attention)(q, k, v, enable_gqa=True) under no_grad
                  (compiled for each shape before it is timed)
  llama.cpp       ggml_flash_attn_ext on ggml's CPU backend, where
                  benchmarks/peers/build_ggml.sh has built it (f32 or bf16 K and V in
                  place; q given and out returned as f32)
Each is checked against attnc's reference evaluator on a short cache (max abs error 1e-4 for
f32, 1e-2 for bf16) before it is timed. Batched decode with mixed lengths and paged caches are
benchmarks/batch_decode.py; packed varlen prefill is benchmarks/varlen.py.
"""
import argparse
import datetime
import json
import mmap
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
import weakref

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from peers import attnc_peer  # noqa: E402
from peers.base import bf16_bits, bf16_to_float32, round_bf16  # noqa: E402

BUILD = attnc_peer.BUILD
ATOL = {"f32": 1e-4, "bf16": 1e-2}
HEADS, KV_HEADS, DIM = 32, 8, 128


def spec(name, dtype, decode):
    splits = ", num_splits = 0" if decode else ""
    return ("attn.kernel @%s {\n  attn.attention {num_heads = %d, num_kv_heads = %d, "
            "head_dim = %d, dtype = %s, layout = bhsd, mask = #attn.causal<bottom_right>, "
            "outputs = [out, lse]%s}\n}\n"
            % (name, HEADS, KV_HEADS, DIM, dtype, splits))


def huge_array(shape, dtype):
    """A zeroed array on memory advised for transparent huge pages, 2 MiB aligned."""
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    size = (nbytes + (2 << 20) * 2 - 1) // (2 << 20) * (2 << 20)
    buf = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if hasattr(buf, "madvise") and hasattr(mmap, "MADV_HUGEPAGE"):
        buf.madvise(mmap.MADV_HUGEPAGE)
    base = np.frombuffer(buf, np.uint8)
    start = (-base.ctypes.data) % (2 << 20)
    return base[start:start + nbytes].view(dtype).reshape(shape)


def inputs(dtype, seq_kv, batch=1, seq_q=1, seed=0):
    """q, k, v: float32 arrays of the inputs, or for bf16 uint16 arrays of their bf16 bits."""
    rng = np.random.default_rng(seed)
    arrays = []
    for heads, seq in ((HEADS, seq_q), (KV_HEADS, seq_kv), (KV_HEADS, seq_kv)):
        x = rng.uniform(-1, 1, (batch, heads, seq, DIM)).astype(np.float32)
        a = huge_array(x.shape, np.uint16 if dtype == "bf16" else np.float32)
        a[...] = bf16_bits(round_bf16(x)) if dtype == "bf16" else x
        arrays.append(a)
    return arrays


class Attnc:
    """One compiled attnc kernel called through its C entry point (ctypes, DLPack)."""

    def __init__(self, name, dtype, decode, target, work):
        self.name, self.dtype = name, dtype
        self.entry = attnc_peer.compile_entry(name, spec(name, dtype, decode), target, work)

    def prepare(self, q, k, v, threads):
        out = np.zeros_like(q)
        lse = np.zeros(q.shape[:3], np.float32)
        ts = [attnc_peer.dl_tensor(a, self.dtype) for a in (q, k, v, out)]
        ts.append(attnc_peer.dl_tensor(lse))
        return attnc_peer.bind_call(self.entry, self.name, ts, (q, k, v, out, lse), threads)


class TorchPeer:
    """A PyTorch attention on zero-copy views of the inputs, under no_grad on `threads`."""

    def __init__(self, dtype):
        import torch  # noqa: F401: a missing torch leaves the peer out
        self.dtype = dtype

    def prepare(self, q, k, v, threads):
        import torch
        torch.set_num_threads(threads)
        tq, tk, tv = sdpa_tensors((q, k, v), self.dtype)

        def run():
            torch.set_num_threads(threads)
            with torch.no_grad():
                out = self.attend(tq, tk, tv)
            return sdpa_numpy(out, self.dtype)
        run()  # FlexAttention compiles for a new shape here, not in a timed call
        return run


class Sdpa(TorchPeer):
    name = "torch-sdpa"

    def attend(self, q, k, v):
        import torch.nn.functional as F
        return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)


class Flex(TorchPeer):
    """FlexAttention's CPU path: torch.compile(flex_attention), which Inductor generates as its
    C++ flash-attention template (one query row: PyTorch's decoding case)."""
    name = "torch-flex"

    def __init__(self, dtype, block_mask=None):
        super().__init__(dtype)
        self.flex = compiled_flex()
        self.block_mask = block_mask

    def attend(self, q, k, v):
        return self.flex(q, k, v, block_mask=self.block_mask, enable_gqa=True)


class LlamaCpp:
    """llama.cpp's CPU flash attention: ggml_flash_attn_ext on ggml's CPU backend, one graph
    planned per row and computed per call (benchmarks/peers/ggml_attention.c, built by
    benchmarks/peers/build_ggml.sh). K and V are read where they are, in f32 or bf16 (ggml's
    BF16 type); q is handed over as f32 and out comes back as f32 (ggml's only result type)."""
    name = "llama.cpp"
    LIB = os.path.join(HERE, "peers", "ggml", "libggml_attention.so")

    def __init__(self, dtype):
        import ctypes
        if not os.path.exists(self.LIB):
            raise ImportError("not built (benchmarks/peers/build_ggml.sh)")
        self.dtype, self.ctypes = dtype, ctypes
        self.lib = ctypes.CDLL(self.LIB)
        self.lib.ggml_attention_prepare.restype = ctypes.c_void_p
        self.lib.ggml_attention_prepare.argtypes = (
            [ctypes.c_int] + [ctypes.c_int64] * 6 + [ctypes.c_void_p] * 4 + [ctypes.c_int])
        self.lib.ggml_attention_run.argtypes = [ctypes.c_void_p]
        self.lib.ggml_attention_free.argtypes = [ctypes.c_void_p]

    def prepare(self, q, k, v, threads):
        qf = np.ascontiguousarray(as_f32(q, self.dtype), np.float32)
        out = np.zeros(qf.shape, np.float32)
        ptr = lambda a: a.ctypes.data_as(self.ctypes.c_void_p)
        state = self.lib.ggml_attention_prepare(
            int(self.dtype == "bf16"), q.shape[0], q.shape[1], k.shape[1], q.shape[2],
            k.shape[2], q.shape[3], ptr(qf), ptr(k), ptr(v), ptr(out), threads)
        if not state:
            raise RuntimeError("ggml_attention_prepare refused the shape")
        keep = (qf, out, k, v)

        def run():
            if self.lib.ggml_attention_run(state):
                raise RuntimeError("ggml_graph_compute failed")
            return out if self.dtype == "f32" else bf16_bits(round_bf16(out))
        run.keep = keep  # the buffers the graph points into live as long as the call
        weakref.finalize(run, self.lib.ggml_attention_free, state)
        return run


def compiled_flex():
    """torch.compile(flex_attention), with room for one compile per row's shape: past dynamo's
    recompile limit (8) it would run unfused, materialising the scores, and be timed so."""
    import torch
    from torch.nn.attention.flex_attention import flex_attention
    for name, value in (("recompile_limit", 256), ("fail_on_recompile_limit_hit", True)):
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, value)
    return torch.compile(flex_attention)


def as_f32(out, dtype):
    return bf16_to_float32(out) if dtype == "bf16" else out


def reference(dtype, q, k, v, work):
    """attnc's reference evaluator, in float32, on the (bf16-rounded) inputs."""
    directory = tempfile.mkdtemp(dir=work)
    path = os.path.join(directory, "spec.mlir")
    with open(path, "w") as f:
        f.write(spec("reference", "f32", decode=False))
    for n, a in (("q", q), ("k", k), ("v", v)):
        np.save(os.path.join(directory, n + ".npy"), as_f32(a, dtype).astype(np.float32))
    subprocess.run([os.path.join(BUILD, "bin", "attnc-run"), "--reference", path,
                    "--q", os.path.join(directory, "q.npy"),
                    "--k", os.path.join(directory, "k.npy"),
                    "--v", os.path.join(directory, "v.npy"), "-o", directory],
                   check=True, stdout=subprocess.DEVNULL)
    return np.load(os.path.join(directory, "out.npy"))


def agrees(peer, dtype, work, threads):
    q, k, v = inputs(dtype, seq_kv=700, seed=1)
    want = reference(dtype, q, k, v, work)
    got = as_f32(peer.prepare(q, k, v, threads)(), dtype)
    err = float(np.max(np.abs(got - want)))
    return None if err <= ATOL[dtype] else "disagrees with the reference: max abs err %.2e" % err


def probe(flag, threads):
    out = subprocess.run([os.path.join(BUILD, "bin", "attnc-run"), flag, "--num-threads",
                          str(threads)], capture_output=True, text=True, check=True).stdout
    return out


class Evictor:
    """Reads a buffer of twice the last-level cache (at least 256 MiB)."""

    def __init__(self):
        name = "SC_LEVEL3_CACHE_SIZE"
        llc = os.sysconf(name) if name in os.sysconf_names else 0
        self.buffer = np.ones(max(2 * max(llc, 0), 256 << 20) // 8, np.int64)

    def __call__(self):
        return int(self.buffer.sum())


def time_runs(runs, repeats, evict=lambda: 0):
    """{name: [seconds]} of the prepared calls `runs` ({name: fn}), interleaved, each timed
    `repeats` times after a warm-up round, `evict` run before every call (untimed). The
    serving group's scripts (varlen.py, batch_decode.py) time their rows with it."""
    times = {name: [] for name in runs}
    for r in range(repeats + 1):  # round 0 warms up
        for name, fn in runs.items():
            evict()
            start = time.perf_counter()
            fn()
            if r:
                times[name].append(time.perf_counter() - start)
    return times


def time_row(peers, q, k, v, threads, repeats, evict):
    return time_runs({p.name: p.prepare(q, k, v, threads) for p in peers}, repeats, evict)


def sdpa_tensors(arrays, dtype):
    """torch tensors viewing the arrays (bf16: their bit patterns reinterpreted, no copy)."""
    import torch
    if dtype == "bf16":
        return [torch.from_numpy(a.view(np.int16)).view(torch.bfloat16) for a in arrays]
    return [torch.from_numpy(a) for a in arrays]


def sdpa_numpy(out, dtype):
    """An SDPA output as the numpy array attnc's kernels write (bf16: uint16 bits)."""
    import torch
    if dtype == "bf16":
        return out.view(torch.int16).numpy().view(np.uint16)
    return out.numpy()


def base_parser(doc, quick_help, repeats):
    """The options every serving-group script takes."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--quick", action="store_true", help=quick_help)
    parser.add_argument("--dtypes", nargs="+", choices=["f32", "bf16"], default=["f32", "bf16"])
    parser.add_argument("--threads", nargs="+", type=int, default=[2])
    parser.add_argument("--repeats", type=int, default=repeats)
    parser.add_argument("--target", default="host", help="attnc's target for f32 kernels")
    return parser


def report_rows(rows, label, cells, figures, base):
    """The table lines of every row's peers: the row's leading cells (`label(row)`), the
    peer's name, its `figures` figures (`cells(row, result)`, "|"-separated) and `base`'s
    median time over the peer's ("-" without base); then the row's notes, one per peer left
    out."""
    lines = []
    for row in rows:
        b = row["results"].get(base, {}).get("median_s")
        for name, r in row["results"].items():
            lines.append("| %s | %s | %s | %s |" % (label(row), name, cells(row, r),
                                                    "%.2f" % (b / r["median_s"]) if b else "-"))
        for name, why in row["notes"].items():
            lines.append("| %s | %s | %s |%s" % (label(row), name, why, " |" * figures))
    return lines


def save(out, meta, rows, report):
    """OUT/results.json (the rows, with the run's command, date and machine added to
    `meta`) and OUT/report.md (the lines `report(meta, rows)` gives)."""
    meta = dict({"command": " ".join(sys.argv),
                 "date": datetime.datetime.now().isoformat(timespec="seconds"),
                 "machine": "%s, %d CPUs" % (platform.processor() or platform.machine(),
                                             os.cpu_count())}, **meta)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(report(meta, rows)) + "\n")
    print("wrote %s" % os.path.join(out, "report.md"))


def report(meta, rows):
    lines = ["# Serving: decode steps", "",
             "Machine: %s; read bandwidth %s; command: `%s`; %s." % (
                 meta["machine"], ", ".join("%.1f GB/s on %s threads" % (b, t)
                                            for t, b in meta["read_bandwidth"].items()),
                 meta["command"], meta["date"]), "",
             "Decode, batch 1, %d query heads over %d KV heads, head_dim %d, one query token; "
             "caches emptied before every call. GB/s: K and V bytes read per second (median); "
             "%% bw: of the read bandwidth on the row's threads; x sdpa: SDPA's median time over "
             "the peer's." % (HEADS, KV_HEADS, DIM), "",
             "| dtype | L | threads | peer | median ms | best ms | GB/s | % bw | x sdpa |",
             "|---|---|---|---|---|---|---|---|---|"]
    return lines + report_rows(
        rows, lambda row: "%s | %d | %d" % (row["dtype"], row["seq_kv"], row["threads"]),
        lambda row, r: "%.3f | %.3f | %.1f | %.0f%%" % (r["median_s"] * 1e3, r["best_s"] * 1e3,
                                                        r["gbps"], r["bw_pct"]),
        4, "torch-sdpa")


def main():
    parser = base_parser(__doc__, "short caches, one repeat", 7)
    parser.add_argument("--seqs", nargs="+", type=int, default=[4096, 16384, 65536])
    args = parser.parse_args()
    if args.quick:
        args.seqs, args.repeats = [1024], 1
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="attnc-serving-")
    targets = {"f32": args.target, "bf16": attnc_peer.bf16_target(args.target)}
    bandwidth = {t: float(re.search(r"read bandwidth: ([0-9.]+) GB/s",
                                    probe("--bandwidth-peak", t)).group(1)) for t in args.threads}
    evict = (lambda: 0) if args.quick else Evictor()
    rows = []
    for dtype in args.dtypes:
        peers = [Attnc("decode_" + dtype, dtype, True, targets[dtype], work),
                 Attnc("prefill_" + dtype, dtype, False, targets[dtype], work)]
        peers[0].name, peers[1].name = "attnc-decode", "attnc-prefill"
        notes = {}
        for peer in (Sdpa, Flex, LlamaCpp):
            try:
                peers.append(peer(dtype))
            except ImportError as e:
                notes[peer.name] = "not installed (benchmarks/peers/install.sh): %s" % e
        for p in list(peers):
            why = agrees(p, dtype, work, args.threads[0])
            if why:
                notes[p.name] = why
                peers.remove(p)
        for seq in args.seqs:
            q, k, v = inputs(dtype, seq)
            for t in args.threads:
                times = time_row(peers, q, k, v, t, args.repeats, evict)
                kv_bytes = k.nbytes + v.nbytes
                results = {}
                for name, ts in times.items():
                    median = statistics.median(ts)
                    gbps = kv_bytes / median * 1e-9
                    results[name] = {"median_s": median, "best_s": min(ts), "gbps": gbps,
                                     "bw_pct": 100 * gbps / bandwidth[t]}
                rows.append({"dtype": dtype, "seq_kv": seq, "threads": t, "results": results,
                             "notes": notes, "kv_bytes": kv_bytes})
                print("%-5s L=%-6d t=%d  %s" % (dtype, seq, t, "  ".join(
                    "%s %.2f ms (%.0f%% bw)" % (n, r["median_s"] * 1e3, r["bw_pct"])
                    for n, r in results.items())), flush=True)
    save(args.out, {"read_bandwidth": bandwidth, "targets": targets, "cold": not args.quick},
         rows, report)


if __name__ == "__main__":
    sys.exit(main())
