"""Linear attention: attnc's kernels (attn.linear_attention, elu + 1, normalized) against a
PyTorch eager chunked implementation (the same algorithm in batched matmuls: per chunk
phi(Q) phi(K)^T masked, a cumulative state across chunks; non-causal phi(K)^T V first), and
against attnc's own softmax attention of the same shape (causal or dense), timed in turn.

    benchmarks/.venv/bin/python benchmarks/linear.py --seq 1024 4096 16384 65536

Columns: milliseconds median (best) (a sample of a call under --min-sample seconds is as
many back-to-back calls as fill it); GFLOPS of the linear kernel (attnc explain's count) and
its % of the FMA peak measured in the same run; x over PyTorch; softmax attention's time and
softmax / linear; with --halide, the Halide backend's build of the same linear kernel (for
--halide-target) and its time over the MLIR kernel's. The crossover is the shortest length
where linear is faster than softmax (softmax left out above --softmax-limit keys: its time
grows as seq^2). Each row checks
attnc's out against PyTorch's float64 (max |err| / max |out| <= 1e-4).
"""
import argparse
import sys

import torch

import attnc
from timing import best_probe, fma_peak, timed_in_turn

LINEAR = """
attn.kernel @linear {{
  attn.linear_attention {{num_heads = {heads}, head_dim = {dim}, dtype = f32, layout = bhsd,
                         feature_map = elu1{causal}}}
}}
"""
SOFTMAX = """
attn.kernel @softmax {{
  attn.attention {{num_heads = {heads}, head_dim = {dim}, dtype = f32, layout = bhsd,
                  mask = {mask}, outputs = [out]}}
}}
"""


def phi(x):
    return torch.nn.functional.elu(x) + 1


def torch_chunked(q, k, v, causal, chunk=64, eps=1e-6):
    """PyTorch eager linear attention: non-causal phi(K)^T V first; causal in chunks (the
    masked product inside a chunk, an exclusive cumulative state across chunks)."""
    q, k = phi(q), phi(k)
    if not causal:
        state, norm = k.transpose(-1, -2) @ v, k.sum(-2)
        return (q @ state) / ((q @ norm[..., None]) + eps)
    b, h, t, d = q.shape
    pad = (-t) % chunk
    q, k, v = (torch.nn.functional.pad(x, (0, 0, 0, pad)) for x in (q, k, v))
    n = (t + pad) // chunk
    q, k, v = (x.reshape(b, h, n, chunk, x.shape[-1]) for x in (q, k, v))
    kv = k.transpose(-1, -2) @ v
    state = kv.cumsum(2) - kv
    ksum = k.sum(-2)
    norm = ksum.cumsum(2) - ksum
    scores = (q @ k.transpose(-1, -2)).tril()
    num = q @ state + scores @ v
    den = (q * norm[..., None, :]).sum(-1) + scores.sum(-1)
    out = num / (den + eps)[..., None]
    return out.reshape(b, h, n * chunk, -1)[:, :, :t]


def arguments(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq", type=int, nargs="+",
                        default=[128, 256, 512, 1024, 4096, 16384, 65536])
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--target", default="host")
    parser.add_argument("--min-sample", type=float, default=0.05,
                        help="a timed sample is as many back-to-back calls as fill this (s)")
    parser.add_argument("--softmax-limit", type=int, default=16384)
    parser.add_argument("--non-causal", action="store_true")
    parser.add_argument("--halide", action="store_true",
                        help="also time the Halide backend's build of the linear kernel")
    parser.add_argument("--halide-target", default="x86-64-avx512",
                        help="a Halide CPU target: x86-64-avx512 or x86-64-avx2")
    return parser.parse_args(argv)


def flops(args, n, causal):
    """The linear kernel's FLOPs (attnc explain's count): causal, per chunk of 64 the masked
    product inside it and Q S, then S += K^T V; non-causal K^T V and Q S."""
    d = args.dim
    if causal:
        return args.heads * n * ((64 * 2 * d + 2 * d * d) + 2 * d * d)
    return args.heads * n * 4 * d * d


def measure(args):
    """{"peak": GFLOPS, "rows": one per seq, "crossover": the first seq where softmax is
    slower, "failed": an out off PyTorch's float64}."""
    torch.set_num_threads(args.threads)
    causal = not args.non_causal
    linear_spec = LINEAR.format(heads=args.heads, dim=args.dim,
                                causal=", causal = true" if causal else "")
    softmax_spec = SOFTMAX.format(heads=args.heads, dim=args.dim,
                                  mask="#attn.causal<top_left>" if causal else "#attn.full")
    module = attnc.compile(linear_spec + softmax_spec, target=args.target)
    halide = None
    if args.halide:  # the linear kernel alone
        halide = attnc.compile(linear_spec, target=args.halide_target, backend="halide")
    result = {"causal": causal, "heads": args.heads, "dim": args.dim, "threads": args.threads,
              "rows": [], "crossover": None, "failed": False, "halide": bool(halide)}
    probes = []
    for n in args.seq:
        probes.append(fma_peak(args.threads))
        gen = torch.Generator().manual_seed(n)
        q, k, v = (torch.randn(1, args.heads, n, args.dim, generator=gen) for _ in range(3))
        calls = {"linear": lambda: module.linear(q, k, v, num_threads=args.threads),
                 "torch": lambda: torch_chunked(q, k, v, causal)}
        if halide:
            calls["halide"] = lambda: halide.linear(q, k, v, num_threads=args.threads)
        if n <= args.softmax_limit:
            calls["softmax"] = lambda: module.softmax(q, k, v, num_threads=args.threads)
        want = torch_chunked(q.double(), k.double(), v.double(), causal)
        err = max(((calls[name]().double() - want).abs().max() / want.abs().max()).item()
                  for name in ("linear", "halide") if name in calls)
        result["failed"] |= err > 1e-4
        times = timed_in_turn(calls, args.repeats, args.min_sample)
        result["rows"].append({"seq": n, "ms": times, "err": err,
                               "gflop": flops(args, n, causal) * 1e-9})
        if "softmax" in times and times["softmax"][0] > times["linear"][0] \
                and result["crossover"] is None:
            result["crossover"] = n
    result["peak_text"] = best_probe(result, "peak", probes, "GFLOPS")
    return result


def table(result):
    """The markdown table of measure()'s result."""
    lines = ["%s, %d heads, head_dim %d, %d threads; FMA peak %s"
             % ("causal" if result["causal"] else "non-causal", result["heads"], result["dim"],
                result["threads"], result["peak_text"]),
             "",
             "| seq | attnc linear ms | GFLOPS (% peak) | PyTorch chunked ms | x over PyTorch | "
             "attnc softmax ms | softmax / linear | max rel err |"
             + (" attnc Halide ms | Halide / MLIR |" if result["halide"] else ""),
             "|---|---|---|---|---|---|---|---|" + ("---|---|" if result["halide"] else "")]
    for row in result["rows"]:
        lin, peer = row["ms"]["linear"], row["ms"]["torch"]
        gflops = row["gflop"] / (lin[0] * 1e-3)
        soft = "- | -"
        if "softmax" in row["ms"]:
            theirs = row["ms"]["softmax"]
            soft = "%.2f (%.2f) | %.2f" % (theirs[0], theirs[1], theirs[0] / lin[0])
        halide = ""
        if "halide" in row["ms"]:
            theirs = row["ms"]["halide"]
            halide = " %.2f (%.2f) | %.2f |" % (theirs[0], theirs[1], theirs[0] / lin[0])
        lines.append("| %d | %.2f (%.2f) | %.1f (%.0f%%) | %.2f (%.2f) | %.1fx | %s | %.1e |%s"
                     % (row["seq"], lin[0], lin[1], gflops, 100 * gflops / result["peak"],
                        peer[0], peer[1], peer[0] / lin[0], soft, row["err"], halide))
    lines += ["", "Crossover: linear is faster than softmax attention from seq %s on (of the "
                  "lengths measured)." % result["crossover"]]
    return lines


def main():
    result = measure(arguments())
    print("\n".join(table(result)))
    return 1 if result["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
