#!/usr/bin/env python3
"""Batched decode with mixed lengths, the serving group's paged rows: one decode step for 16
sequences of different KV lengths over a contiguous cache (kv_cache = lengths) and over paged
caches (kv_cache = paged<N>), against PyTorch's SDPA on the padded batch, in one run.

  benchmarks/.venv/bin/python benchmarks/batch_decode.py --out DIR    (peers/install.sh)
  python3 benchmarks/batch_decode.py --quick --out DIR                (no torch: attnc only)

Rows: batch 16, 32 query heads over 8 KV heads, head_dim 128 (Llama-3-8B), one query token,
KV lengths drawn (seed 0) in [L/16, L] for L = 16k (--max-len), f32 and bf16. The bytes a step
must read are the sequences' own K and V, 2 x sum(lengths) x 8 x 128 x bytes: GB/s and % of
the read bandwidth (attnc-run --bandwidth-peak on the row's threads, probed before and after the
rows: the larger) are of those.
Peers:
  attnc-lengths-bhsd   kv_cache = lengths on a head-major cache [16, 8, L, 128]
  attnc-lengths-bshd   kv_cache = lengths on a token-major cache [16, L, 8, 128]
  attnc-paged16/64     kv_cache = paged<16> / paged<64>: pages [num_pages, N, 8, 128] in a
                       seeded random order, each sequence's in its block-table row
  attnc-paged16-hnd    kv_cache = paged<16, hnd>: the same pages head-major, [num_pages, 8,
                       16, 128] (FlashInfer's HND, vLLM's CPU cache)
  torch-sdpa           F.scaled_dot_product_attention on the padded head-major cache with a
                       boolean key mask (keys past a sequence's length), enable_gqa, no_grad
  torch-flex           torch.compile(flex_attention) on the same cache, with a block mask from
                       the mask_mod kv < length[b] (blocks past a length skipped)
Caches are emptied before every call (serving.py's Evictor); each row is timed --repeats
times per peer, interleaved; median and best. Every peer is first checked against
attnc-lengths-bhsd on a short batch (max abs error 1e-5 for f32, 1e-2 for bf16; that kernel is
checked against the reference by test/Target/CPU/paged-numerics.test).
"""
import os
import re
import statistics
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from peers import attnc_peer  # noqa: E402
from peers.base import bf16_bits, round_bf16  # noqa: E402
from serving import (Evictor, as_f32, base_parser, compiled_flex, huge_array,  # noqa: E402
                     probe, report_rows, save, sdpa_numpy, sdpa_tensors, time_runs)

HEADS, KV_HEADS, DIM, BATCH = 32, 8, 128, 16
ATOL = {"f32": 1e-5, "bf16": 1e-2}
PEERS = [("attnc-lengths-bhsd", "bhsd", "lengths"), ("attnc-lengths-bshd", "bshd", "lengths"),
         ("attnc-paged16", "bshd", "paged<16>"), ("attnc-paged64", "bshd", "paged<64>"),
         ("attnc-paged16-hnd", "bhsd", "paged<16, hnd>")]


def spec(name, dtype, layout, cache):
    return ("attn.kernel @%s {\n  attn.attention {num_heads = %d, num_kv_heads = %d, "
            "head_dim = %d, dtype = %s, layout = %s, mask = #attn.causal<bottom_right>, "
            "max_seq = [1, 1048576], outputs = [out, lse], num_splits = 0, kv_cache = %s}\n}\n"
            % (name, HEADS, KV_HEADS, DIM, dtype, layout, cache))


def make_batch(dtype, max_len, seed=0):
    """q [16, 32, 1, 128]; the head-major cache [16, 8, L, 128], the same token-major, and
    pages of 16 and 64 (shuffled) with their tables; the lengths."""
    rng = np.random.default_rng(seed)
    lens = rng.integers(max(1, max_len // 16), max_len + 1, BATCH).astype(np.int32)
    storage = np.uint16 if dtype == "bf16" else np.float32
    batch = {"lens": lens}

    def draw(shape):
        x = rng.uniform(-1, 1, shape).astype(np.float32)
        a = huge_array(shape, storage)
        a[...] = bf16_bits(round_bf16(x)) if dtype == "bf16" else x
        return a
    batch["q"] = draw((BATCH, HEADS, 1, DIM))
    batch["bhsd"] = [draw((BATCH, KV_HEADS, max_len, DIM)) for _ in range(2)]
    batch["bshd"] = [np.ascontiguousarray(a.transpose(0, 2, 1, 3)) for a in batch["bhsd"]]
    for page in (16, 64):
        per_seq = -(-max_len // page)
        table = rng.permutation(BATCH * per_seq).astype(np.int32).reshape(BATCH, per_seq)
        caches = []
        for tokens in batch["bshd"]:
            pages = huge_array((BATCH * per_seq, page, KV_HEADS, DIM), storage)
            padded = np.zeros((BATCH, per_seq * page, KV_HEADS, DIM), storage)
            padded[:, :max_len] = tokens
            pages[table.reshape(-1)] = padded.reshape(BATCH * per_seq, page, KV_HEADS, DIM)
            caches.append(pages)
        batch["paged<%d>" % page] = (caches, table)
        if page == 16:  # the same pages head-major: [num_pages, 8, 16, 128]
            batch["paged<16, hnd>"] = ([pages_head_major(c) for c in caches], table)
    return batch


def pages_head_major(pages):
    hnd = huge_array((pages.shape[0], KV_HEADS, pages.shape[1], DIM), pages.dtype)
    hnd[...] = pages.transpose(0, 2, 1, 3)
    return hnd


class Attnc:
    def __init__(self, name, dtype, layout, cache, target, work):
        self.name, self.dtype, self.layout, self.cache = name, dtype, layout, cache
        kernel = re.sub(r"\W", "_", name) + "_" + dtype
        self.entry = attnc_peer.compile_entry(kernel, spec(kernel, dtype, layout, cache),
                                              target, work)

    def prepare(self, batch, threads):
        q = batch["q"]
        if self.layout == "bshd":  # one query token: the same memory, [16, 1, 32, 128]
            q = q.reshape(BATCH, 1, HEADS, DIM)
        if self.cache == "lengths":
            (k, v), extra = batch[self.layout], [batch["lens"]]
        else:
            (k, v), table = batch[self.cache]
            extra = [batch["lens"], table]
        out = np.zeros_like(q)
        lse = np.zeros((BATCH, HEADS, 1), np.float32)
        ts = [attnc_peer.dl_tensor(a, self.dtype) for a in (q, k, v, out)]
        ts += [attnc_peer.dl_tensor(a) for a in [lse] + extra]
        return attnc_peer.bind_call(self.entry, self.name, ts, (q, k, v, out, lse) + tuple(extra),
                                    threads)


class Sdpa:
    name = "torch-sdpa"

    def __init__(self, dtype):
        import torch  # noqa: F401: a missing torch leaves the peer out
        self.dtype = dtype

    def prepare(self, batch, threads):
        import torch
        import torch.nn.functional as F
        tq, tk, tv = sdpa_tensors([batch["q"]] + batch["bhsd"], self.dtype)
        keys = torch.arange(tk.shape[2])[None, None, None, :]
        mask = keys < torch.from_numpy(batch["lens"].astype(np.int64))[:, None, None, None]

        def run():
            torch.set_num_threads(threads)
            with torch.no_grad():
                out = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=mask,
                                                     enable_gqa=True)
            return sdpa_numpy(out, self.dtype)
        return run


class Flex:
    """FlexAttention on the padded head-major cache, keys past each sequence's length masked
    by a mask_mod, so its block mask skips them (PyTorch's decoding path on CPU)."""
    name = "torch-flex"

    def __init__(self, dtype):
        self.dtype = dtype
        self.flex = compiled_flex()

    def prepare(self, batch, threads):
        import torch
        from torch.nn.attention.flex_attention import create_block_mask
        tq, tk, tv = sdpa_tensors([batch["q"]] + batch["bhsd"], self.dtype)
        lens = torch.from_numpy(batch["lens"].astype(np.int64))
        block_mask = create_block_mask(lambda b, h, q, kv: kv < lens[b], BATCH, None, 1,
                                       tk.shape[2], device="cpu")

        def run():
            torch.set_num_threads(threads)
            with torch.no_grad():
                out = self.flex(tq, tk, tv, block_mask=block_mask, enable_gqa=True)
            return sdpa_numpy(out, self.dtype)
        run()  # compiled for this shape here, not in a timed call
        return run


def check(peers, dtype, threads):
    """{peer: why} for peers that disagree with attnc-lengths-bhsd on a short batch."""
    batch = make_batch(dtype, 700, seed=1)
    runs = {p.name: as_f32(p.prepare(batch, threads)(), dtype) for p in peers}
    want = runs["attnc-lengths-bhsd"]
    notes = {}
    for name, got in runs.items():
        err = float(np.max(np.abs(got.reshape(want.shape) - want)))  # bshd: [16, 1, 32, 128]
        if err > ATOL[dtype]:
            notes[name] = "disagrees with attnc-lengths-bhsd: max abs err %.2e" % err
    return notes


def time_row(peers, batch, threads, repeats, evict):
    return time_runs({p.name: p.prepare(batch, threads) for p in peers}, repeats, evict)


def report(meta, rows):
    lines = ["# Serving: batched decode with mixed lengths, contiguous and paged", "",
             "Machine: %s; read bandwidth (probed before and after the rows) %s; command: "
             "`%s`; %s." % (
                 meta["machine"], ", ".join("%.1f and %.1f GB/s on %s threads" % (b[0], b[1], t)
                                            for t, b in meta["read_bandwidth_start_end"].items()),
                 meta["command"], meta["date"]), "",
             "One decode step of %d sequences, %d query heads over %d KV heads, head_dim %d; "
             "caches emptied before every call. GB/s: the sequences' own K and V bytes per "
             "second (median); %% bw: of the read bandwidth; x bhsd: attnc-lengths-bhsd's "
             "median over the peer's." % (BATCH, HEADS, KV_HEADS, DIM), "",
             "| dtype | lengths | threads | peer | median ms | best ms | GB/s | % bw | x bhsd |",
             "|---|---|---|---|---|---|---|---|---|"]
    return lines + report_rows(
        rows, lambda row: "%s | %s | %d" % (row["dtype"], row["lengths"], row["threads"]),
        lambda row, r: "%.3f | %.3f | %.1f | %.0f%%" % (r["median_s"] * 1e3, r["best_s"] * 1e3,
                                                        r["gbps"], r["bw_pct"]),
        4, "attnc-lengths-bhsd")


def main():
    parser = base_parser(__doc__, "short caches, one repeat", 7)
    parser.add_argument("--max-len", type=int, default=16384)
    args = parser.parse_args()
    if args.quick:
        args.max_len, args.repeats = 1024, 1
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="attnc-batch-decode-")
    targets = {"f32": args.target, "bf16": attnc_peer.bf16_target(args.target)}
    # Probed before the rows and again after them (this VM's bandwidth moves between
    # minutes): % bw divides by the larger, and the report gives both.
    measure = lambda: {t: float(re.search(r"read bandwidth: ([0-9.]+) GB/s",
                                          probe("--bandwidth-peak", t)).group(1))
                       for t in args.threads}
    bandwidth = measure()
    evict = (lambda: 0) if args.quick else Evictor()
    rows = []
    for dtype in args.dtypes:
        peers = [Attnc(n, dtype, layout, cache, targets[dtype], work) for n, layout, cache in PEERS]
        notes = {}
        for peer in (Sdpa, Flex):
            try:
                peers.append(peer(dtype))
            except ImportError as e:
                notes[peer.name] = "not installed (benchmarks/peers/install.sh): %s" % e
        notes.update(check(peers, dtype, args.threads[0]))
        for name, why in notes.items():
            print("%-5s %s: %s" % (dtype, name, why), flush=True)
        timed = [p for p in peers if p.name not in notes]
        batch = make_batch(dtype, args.max_len)
        kv_bytes = 2 * int(batch["lens"].sum()) * KV_HEADS * DIM * (2 if dtype == "bf16" else 4)
        lengths = "%d-%d (sum %d)" % (batch["lens"].min(), batch["lens"].max(), batch["lens"].sum())
        for t in args.threads:
            times = time_row(timed, batch, t, args.repeats, evict)
            results = {}
            for name, ts in times.items():
                median = statistics.median(ts)
                gbps = kv_bytes / median * 1e-9
                results[name] = {"median_s": median, "best_s": min(ts), "gbps": gbps,
                                 "bw_pct": 100 * gbps / bandwidth[t]}
            rows.append({"dtype": dtype, "lengths": lengths, "threads": t, "results": results,
                         "notes": notes, "kv_bytes": kv_bytes})
            print("%-5s t=%d  %s" % (dtype, t, "  ".join(
                "%s %.2f ms (%.0f%% bw)" % (n, r["median_s"] * 1e3, r["bw_pct"])
                for n, r in results.items())), flush=True)
    after = measure()
    for row in rows:
        t, start = row["threads"], bandwidth[row["threads"]]
        for r in row["results"].values():
            r["bw_pct"] = 100 * r["gbps"] / max(start, after[t])
    save(args.out, {"read_bandwidth": {t: max(bandwidth[t], after[t]) for t in args.threads},
                    "read_bandwidth_start_end": {t: [bandwidth[t], after[t]]
                                                 for t in args.threads},
                    "targets": targets, "cold": not args.quick}, rows, report)


if __name__ == "__main__":
    sys.exit(main())
