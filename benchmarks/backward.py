#!/usr/bin/env python3
"""The backward pass: attnc's backward kernel against its own forward and against PyTorch's
CPU flash-attention backward, in one run.

Rows (issue 40): dense, causal, sliding window (left 256) and BigBird (block 64, window 1,
global 1, random 2), each at head_dim 64 and 128; q, k, v [1, heads, seq, head_dim] bhsd, 16
heads, f32 by default. Per row, one spec compiled by attnc.compile into two kernels: the
forward (outputs = [out, lse]) and the backward (outputs = [dq, dk, dv]), which takes the
forward's out and lse. PyTorch's side is aten's
`_scaled_dot_product_flash_attention_for_cpu_backward` (what SDPA's CPU backward runs) on the
forward's out and lse from `_scaled_dot_product_flash_attention_for_cpu`; causal rows pass
is_causal, the window and BigBird rows a dense additive mask (seq x seq, all PyTorch's CPU
kernel takes). Every call on `--threads` threads; the three calls of a row run in turn, one
of each per round, `--repeats` rounds after a warm-up, so a drift of the machine moves all
three: median and best per call, and the ratios of the medians.

Columns: attnc forward and backward times, backward / forward (issue 40: at most 3.0 at seq
>= 2048), PyTorch's backward and attnc's speedup over it (at least 1.5x), and the backward's
GFLOPS by the 2.5x-forward convention (2.5 x 4 x head_dim per kept (b, h, q, kv) pair).
Before timing, attnc's gradients are compared with PyTorch's (rtol 1e-3, relative to each
gradient's largest: the two differ by f32 rounding). BigBird's kept pairs come from a weights
kernel of its mask, at most seq 4096: longer BigBird rows have no PyTorch column.

    benchmarks/.venv/bin/python benchmarks/backward.py                  # seq 2048
    benchmarks/.venv/bin/python benchmarks/backward.py --seq 8192 --rows causal_d128
"""
import argparse

import torch

import attnc
from timing import timed_in_turn

SPEC = """
attn.kernel @fwd {{
  attn.attention {{num_heads = {heads}, head_dim = {dim}, dtype = {dtype}, layout = bhsd,
                  mask = {mask}, outputs = [out, lse]}}
}}
attn.kernel @bwd {{
  attn.attention {{num_heads = {heads}, head_dim = {dim}, dtype = {dtype}, layout = bhsd,
                  mask = {mask}, outputs = [dq, dk, dv]}}
}}
"""
MASKS = {
    "dense": "#attn.full",
    "causal": "#attn.causal<top_left>",
    "window": "#attn.sliding_window<left = 256, right = 0>",
    "bigbird": "#attn.bigbird<block = 64, window = 1, global = 1, random = 2, seed = 1>",
}


def dense_mask(kind, seq):
    """Causal and window rows' kept pairs as a bool [seq, seq] tensor."""
    i = torch.arange(seq)[:, None]
    j = torch.arange(seq)[None, :]
    if kind == "causal":
        return j <= i
    if kind == "window":
        return (j <= i) & (j >= i - 256)
    return None


def bigbird_mask(spec_mask, seq):
    """BigBird's kept pairs as a bool [seq, seq] tensor: the weights of a one-head forward
    kernel of the same mask on q = k = 0, where every kept pair has score 0, so its weight is
    1 / (the row's kept keys) and every dropped one 0."""
    spec = """
attn.kernel @probe {{
  attn.attention {{num_heads = 1, head_dim = 16, dtype = f32, layout = bhsd, mask = {mask},
                  max_seq = [{seq}, {seq}], outputs = [out, lse, weights]}}
}}
""".format(mask=spec_mask, seq=seq)
    probe = attnc.compile(spec, target=TARGET).probe
    zeros = torch.zeros(1, 1, seq, 16)
    _, _, weights = probe(zeros, zeros, zeros)
    return weights[0, 0] > 0


def torch_calls(q, k, v, d_out, kind, mask_bool, scale):
    aten = torch.ops.aten
    causal = kind == "causal"
    bias = None
    if mask_bool is not None and not causal:
        bias = torch.zeros(mask_bool.shape, dtype=q.dtype).masked_fill(~mask_bool, float("-inf"))
    out, lse = aten._scaled_dot_product_flash_attention_for_cpu(
        q, k, v, 0.0, causal, attn_mask=bias, scale=scale)
    backward = lambda: aten._scaled_dot_product_flash_attention_for_cpu_backward(
        d_out, q, k, v, out, lse, 0.0, causal, attn_mask=bias, scale=scale)
    return backward


CHECKS = []


def close(row, name, got, ref, rtol=1e-3):
    """Whether attnc's gradient `got` is within rtol x its largest of PyTorch's; noted for the
    lines after the table."""
    scale = ref.abs().max().item()
    err = (got.float() - ref.float()).abs().max().item()
    ok = err <= rtol * max(scale, 1e-30)
    CHECKS.append("%s %s: max abs diff %.2e from PyTorch's (largest %.2e): %s"
                  % (row, name, err, scale, "ok" if ok else "MISMATCH"))
    return ok


TARGET = None
# The largest seq_q x seq_kv a weights kernel writes (attn.attention's limit).
MAX_PROBE = 1 << 24


def run_row(args, kind, dim):
    heads, seq = args.heads, args.seq
    dtype = {"f32": torch.float32, "bf16": torch.bfloat16}[args.dtype]
    module = attnc.compile(SPEC.format(heads=heads, dim=dim, dtype=args.dtype,
                                       mask=MASKS[kind]), target=TARGET)
    gen = torch.Generator().manual_seed(0)
    q, k, v, d_out = (torch.randn(1, heads, seq, dim, generator=gen).to(dtype) for _ in range(4))
    out, lse = module.fwd(q, k, v, num_threads=args.threads)
    dq, dk, dv = module.bwd(q, k, v, out, lse, d_out, num_threads=args.threads)
    row = "%s_d%d" % (kind, dim)
    mask = None
    if kind in ("causal", "window"):
        mask = dense_mask(kind, seq)
    elif kind == "bigbird" and seq * seq > MAX_PROBE:
        CHECKS.append("%s: no PyTorch column: the BigBird mask is read from a weights kernel, "
                      "at most %d pairs (seq 4096)" % (row, MAX_PROBE))
    elif kind == "bigbird":
        mask = bigbird_mask(MASKS[kind], seq)
    outs = [torch.empty_like(out), torch.empty_like(lse)]
    grads = [torch.empty_like(t) for t in (q, k, v)]
    calls = {
        "forward": lambda: module.fwd(q, k, v, out=outs[0], lse=outs[1],
                                      num_threads=args.threads),
        "backward": lambda: module.bwd(q, k, v, out, lse, d_out, dq=grads[0], dk=grads[1],
                                       dv=grads[2], num_threads=args.threads),
    }
    ok = True
    if kind != "bigbird" or mask is not None:
        calls["torch"] = torch_calls(q, k, v, d_out, kind, mask, dim ** -0.5)
        ref = calls["torch"]()
        ok = all([close(row, n, g, r) for n, g, r in zip(("dq", "dk", "dv"), (dq, dk, dv),
                                                         ref[:3])])
    times = timed_in_turn(calls, args.repeats)
    fwd, bwd = times["forward"][0], times["backward"][0]
    pairs = heads * (int(mask.sum()) if mask is not None else seq * seq)
    gflops = 2.5 * 4 * dim * pairs / (bwd * 1e-3) * 1e-9
    peer = "- | -"
    if "torch" in times:
        peer = "%.1f (%.1f) | %.2fx" % (times["torch"][0], times["torch"][1],
                                        times["torch"][0] / bwd)
    print("| %s | %.1f (%.1f) | %.1f (%.1f) | %.2f | %s | %s |"
          % (row, fwd, times["forward"][1], bwd, times["backward"][1], bwd / fwd, peer,
             "%.1f" % gflops if mask is not None or kind != "bigbird" else "-"))
    return ok


def main():
    global TARGET
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq", type=int, default=2048)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--dtype", choices=["f32", "bf16"], default="f32")
    parser.add_argument("--target", help="attnc target (default: this machine's)")
    parser.add_argument("--rows", default=",".join("%s_d%d" % (m, d) for m in MASKS
                                                   for d in (64, 128)),
                        help="comma-separated KIND_dDIM rows")
    args = parser.parse_args()
    TARGET = args.target
    torch.set_num_threads(args.threads)
    print("seq %d, %d heads, %s, %d threads, %d rounds; ms as median (best)"
          % (args.seq, args.heads, args.dtype, args.threads, args.repeats))
    print("| row | attnc forward | attnc backward | bwd / fwd | PyTorch CPU backward | "
          "attnc over PyTorch | backward GFLOPS |")
    print("|---|---|---|---|---|---|---|")
    ok = True
    for row in args.rows.split(","):
        kind, dim = row.rsplit("_d", 1)
        ok &= run_row(args, kind, int(dim))
    print("\n".join(CHECKS))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
