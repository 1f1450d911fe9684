#!/usr/bin/env python3
"""Packed variable-length prefill, the serving group's varlen rows: attnc's varlen kernel
(varlen = cu_seqlens) against the same spec's padded batch kernel and PyTorch's SDPA on the
padded batch, in one run.

  benchmarks/.venv/bin/python benchmarks/varlen.py --out DIR          (peers/install.sh)
  python3 benchmarks/varlen.py --quick --out DIR                      (no torch: attnc only)

Rows: 32 query heads over 8 KV heads, head_dim 128 (Llama-3-8B), causal, f32 and bf16, a batch
of 8 prompts (each as many keys as queries):
  equal   8 x 1024 tokens: the packed kernel against the padded one on the same work (the
          issue's bar: within 5%);
  mixed   lengths 1024, 256, 2048, 128, 768, 1536, 64, 512 (6336 tokens): packed, against a
          batch padded to 2048 (16384 tokens), as a framework without varlen pads it.
Peers:
  attnc-varlen   the spec with varlen = cu_seqlens (q, k, v packed [total, heads, 128])
  attnc-padded   the same spec without it, on the padded batch (bshd [8, L, heads, 128])
  torch-sdpa     F.scaled_dot_product_attention(is_causal=True, enable_gqa=True) on the padded
                 batch (bhsd views of the bshd arrays), under no_grad
Each row is timed --repeats times per peer, peers interleaved (warm caches: prefill is
compute-bound); median and best are reported, with tokens/s of the useful (packed) tokens.
Before timing, the packed kernel's rows are checked against the padded kernel's valid rows
(max abs error 1e-5 for f32, 1e-2 for bf16), and SDPA's against the padded kernel's.
"""
import os
import statistics
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from peers import attnc_peer  # noqa: E402
from peers.base import bf16_bits, round_bf16  # noqa: E402
from serving import (as_f32, base_parser, report_rows, save, sdpa_numpy,  # noqa: E402
                     sdpa_tensors, time_runs)

HEADS, KV_HEADS, DIM = 32, 8, 128
ATOL = {"f32": 1e-5, "bf16": 1e-2}
ROWS = {"equal": [1024] * 8, "mixed": [1024, 256, 2048, 128, 768, 1536, 64, 512]}


def spec(name, dtype, varlen):
    return ("attn.kernel @%s {\n  attn.attention {num_heads = %d, num_kv_heads = %d, "
            "head_dim = %d, dtype = %s, layout = bshd, mask = #attn.causal<bottom_right>, "
            "outputs = [out, lse]%s}\n}\n"
            % (name, HEADS, KV_HEADS, DIM, dtype, ", varlen = cu_seqlens" if varlen else ""))


class Attnc:
    """One compiled kernel through its C entry point: packed (varlen) or padded."""

    def __init__(self, name, dtype, varlen, target, work):
        self.name, self.dtype, self.varlen = name, dtype, varlen
        self.entry = attnc_peer.compile_entry(name, spec(name, dtype, varlen), target, work)

    def prepare(self, batch, threads):
        q, k, v = batch["packed" if self.varlen else "padded"]
        out = np.zeros_like(q)
        lse_shape = (HEADS, q.shape[0]) if self.varlen else (q.shape[0], HEADS, q.shape[1])
        lse = np.zeros(lse_shape, np.float32)
        ts = [attnc_peer.dl_tensor(a, self.dtype) for a in (q, k, v, out)]
        ts.append(attnc_peer.dl_tensor(lse))
        if self.varlen:
            ts += [attnc_peer.dl_tensor(batch["cu"]), attnc_peer.dl_tensor(batch["cu"])]
        return attnc_peer.bind_call(self.entry, self.name, ts, (q, k, v, out, lse), threads)


class Sdpa:
    name = "torch-sdpa"

    def __init__(self, dtype):
        import torch  # noqa: F401: a missing torch leaves the peer out
        self.dtype = dtype

    def prepare(self, batch, threads):
        import torch
        import torch.nn.functional as F
        # bshd arrays as bhsd views
        tq, tk, tv = (t.transpose(1, 2) for t in sdpa_tensors(batch["padded"], self.dtype))

        def run():
            torch.set_num_threads(threads)
            with torch.no_grad():
                out = F.scaled_dot_product_attention(tq, tk, tv, is_causal=True,
                                                     enable_gqa=True).transpose(1, 2)
            return sdpa_numpy(out.contiguous(), self.dtype)
        return run


def make_batch(dtype, lens, seed=0):
    """Padded bshd q, k, v [batch, max, heads, 128], the same packed, and the offsets."""
    rng = np.random.default_rng(seed)
    longest, arrays = max(lens), {}
    for name, heads in (("q", HEADS), ("k", KV_HEADS), ("v", KV_HEADS)):
        x = rng.uniform(-1, 1, (len(lens), longest, heads, DIM)).astype(np.float32)
        arrays[name] = bf16_bits(round_bf16(x)) if dtype == "bf16" else x
    padded = tuple(arrays[n] for n in "qkv")
    packed = tuple(np.ascontiguousarray(np.concatenate([a[b, :n] for b, n in enumerate(lens)]))
                   for a in padded)
    cu = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
    return {"padded": padded, "packed": packed, "cu": cu, "lens": lens}


def valid_rows(padded_out, lens):
    return np.concatenate([padded_out[b, :n] for b, n in enumerate(lens)])


def check(peers, batch, dtype, threads):
    """{peer: why} for peers whose valid rows disagree with the padded attnc kernel's."""
    runs = {p.name: as_f32(p.prepare(batch, threads)(), dtype) for p in peers}
    want = valid_rows(runs["attnc-padded"], batch["lens"])
    notes = {}
    for name, got in runs.items():
        if name != "attnc-varlen":
            got = valid_rows(got, batch["lens"])
        err = float(np.max(np.abs(got - want)))
        if err > ATOL[dtype]:
            notes[name] = "disagrees with attnc-padded: max abs err %.2e" % err
    return notes


def time_row(peers, batch, threads, repeats):
    return time_runs({p.name: p.prepare(batch, threads) for p in peers}, repeats)


def report(meta, rows):
    lines = ["# Serving: packed variable-length prefill", "",
             "Machine: %s; command: `%s`; %s." % (meta["machine"], meta["command"],
                                                  meta["date"]), "",
             "Causal prefill, %d query heads over %d KV heads, head_dim %d, a batch of 8 "
             "prompts; tokens: the prompts' (packed) tokens; k tok/s: those per second "
             "(median); x padded: attnc-padded's median time over the peer's." % (
                 HEADS, KV_HEADS, DIM), "",
             "| dtype | lengths | threads | peer | median ms | best ms | k tok/s | x padded |",
             "|---|---|---|---|---|---|---|---|"]
    return lines + report_rows(
        rows, lambda row: "%s | %s (%d tokens) | %d" % (row["dtype"], row["kind"], row["tokens"],
                                                       row["threads"]),
        lambda row, r: "%.2f | %.2f | %.1f" % (r["median_s"] * 1e3, r["best_s"] * 1e3,
                                              row["tokens"] / r["median_s"] * 1e-3),
        3, "attnc-padded")


def main():
    args = base_parser(__doc__, "short prompts, one repeat", 5).parse_args()
    rows_spec = ROWS
    if args.quick:
        rows_spec = {k: [max(1, n // 16) for n in v] for k, v in ROWS.items()}
        args.repeats = 1
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="attnc-varlen-")
    targets = {"f32": args.target, "bf16": attnc_peer.bf16_target(args.target)}
    rows = []
    for dtype in args.dtypes:
        peers = [Attnc("varlen_" + dtype, dtype, True, targets[dtype], work),
                 Attnc("padded_" + dtype, dtype, False, targets[dtype], work)]
        peers[0].name, peers[1].name = "attnc-varlen", "attnc-padded"
        notes = {}
        try:
            peers.append(Sdpa(dtype))
        except ImportError as e:
            notes["torch-sdpa"] = "not installed (benchmarks/peers/install.sh): %s" % e
        for kind, lens in rows_spec.items():
            batch = make_batch(dtype, lens)
            row_notes = dict(notes, **check(peers, batch, dtype, args.threads[0]))
            for name, why in row_notes.items():
                print("%-5s %-6s %s: %s" % (dtype, kind, name, why), flush=True)
            timed = [p for p in peers if p.name not in row_notes]
            for t in args.threads:
                times = time_row(timed, batch, t, args.repeats)
                results = {n: {"median_s": statistics.median(ts), "best_s": min(ts)}
                           for n, ts in times.items()}
                rows.append({"dtype": dtype, "kind": kind, "lens": lens, "tokens": sum(lens),
                             "threads": t, "results": results, "notes": row_notes})
                print("%-5s %-6s t=%d  %s" % (dtype, kind, t, "  ".join(
                    "%s %.1f ms" % (n, r["median_s"] * 1e3) for n, r in results.items())),
                    flush=True)
    save(args.out, {"targets": targets}, rows, report)


if __name__ == "__main__":
    sys.exit(main())
