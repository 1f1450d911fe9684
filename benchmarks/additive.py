"""Additive (Bahdanau) attention: attnc's kernel (additive = @va) against PyTorch eager with
the Keras formula (scores = sum(v * tanh(q[:, :, None] + k[:, None]), -1): a (B, H, N, N, d)
tensor), and against attnc's own dot-product kernel of the same shape, timed in turn.

    benchmarks/.venv/bin/python benchmarks/additive.py --seq 256 1024 2048

Columns: milliseconds median (best) (a sample of a call under --min-sample seconds is as
many back-to-back calls as fill it); pairs x d per second (G, attnc's row: one tanh each)
and its % of the tanh roofline measured in the same run (attnc-run --tanh-peak: the
kernels' tanh step from registers); additive / dot: what the tanh costs over the
dot-product kernel. PyTorch's column is left out where its (B, H, N, N, d) tensor would
pass --torch-limit GiB. Each row also checks attnc's out against PyTorch's (float64) where
both ran.
"""
import argparse
import sys

import torch

import attnc
from timing import best_probe, tanh_peak, timed_in_turn

SPEC = """
attn.kernel @additive {{
  attn.attention {{num_heads = {heads}, head_dim = {dim}, dtype = f32, layout = bhsd,
                  mask = #attn.full, outputs = [out, lse], inputs = [va: f32 [heads, head_dim]],
                  additive = @va}}
}}
attn.kernel @dot {{
  attn.attention {{num_heads = {heads}, head_dim = {dim}, dtype = f32, layout = bhsd,
                  mask = #attn.full, outputs = [out, lse]}}
}}
"""


def keras_formula(q, k, v, va):
    """PyTorch eager, as Keras' AdditiveAttention computes it: the whole (B, H, N, N, d)."""
    scores = (va[None, :, None, None, :] * torch.tanh(q[:, :, :, None, :]
                                                      + k[:, :, None, :, :])).sum(-1)
    return torch.softmax(scores, -1) @ v


def arguments(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq", type=int, nargs="+", default=[256, 1024, 2048])
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--target", default="host")
    parser.add_argument("--min-sample", type=float, default=0.05,
                        help="a timed sample is as many back-to-back calls as fill this (s)")
    parser.add_argument("--torch-limit", type=float, default=4.0,
                        help="GiB of PyTorch's (B, H, N, N, d) tensor it may build")
    return parser.parse_args(argv)


def measure(args):
    """{"roofline": G steps/s, "rows": one per seq, "failed": an out off PyTorch's}."""
    torch.set_num_threads(args.threads)
    module = attnc.compile(SPEC.format(heads=args.heads, dim=args.dim), target=args.target)
    result = {"heads": args.heads, "dim": args.dim, "threads": args.threads,
              "rows": [], "failed": False}
    probes = []
    for n in args.seq:
        probes.append(tanh_peak(args.threads))
        gen = torch.Generator().manual_seed(n)
        q, k, v = (torch.randn(1, args.heads, n, args.dim, generator=gen) for _ in range(3))
        va = torch.randn(args.heads, args.dim, generator=gen) / args.dim ** 0.5
        calls = {
            "additive": lambda: module.additive(q, k, v, va, num_threads=args.threads),
            "dot": lambda: module.dot(q, k, v, num_threads=args.threads),
        }
        row = {"seq": n, "steps": args.heads * n * n * args.dim,
               "torch_gib": args.heads * n * n * args.dim * 4 / 2 ** 30, "err": None}
        if row["torch_gib"] <= args.torch_limit:
            calls["torch"] = lambda: keras_formula(q, k, v, va)
            want = keras_formula(*(x.double() for x in (q, k, v, va)))
            row["err"] = (calls["additive"]()[0].double() - want).abs().max().item()
            result["failed"] |= row["err"] > 1e-4
        row["ms"] = timed_in_turn(calls, args.repeats, args.min_sample)
        result["rows"].append(row)
    result["roofline_text"] = best_probe(result, "roofline", probes, "G steps/s")
    return result


def table(result):
    """The markdown table of measure()'s result."""
    lines = ["%d heads, head_dim %d, %d threads; tanh roofline (attnc-run --tanh-peak) %s"
             % (result["heads"], result["dim"], result["threads"], result["roofline_text"]),
             "",
             "| seq | attnc additive ms | G pairs x d / s (% of the tanh roofline) | "
             "attnc dot ms | additive / dot | PyTorch eager ms | x over PyTorch | check |",
             "|---|---|---|---|---|---|---|---|"]
    for row in result["rows"]:
        add, dot = row["ms"]["additive"], row["ms"]["dot"]
        rate = row["steps"] / (add[0] * 1e-3) * 1e-9
        peer, check = "- | -", "PyTorch left out: %.1f GiB" % row["torch_gib"]
        if "torch" in row["ms"]:
            theirs = row["ms"]["torch"]
            peer = "%.1f (%.1f) | %.1fx" % (theirs[0], theirs[1], theirs[0] / add[0])
            check = "max abs err %.1e" % row["err"]
        lines.append("| %d | %.2f (%.2f) | %.2f (%.0f%%) | %.2f (%.2f) | %.1f | %s | %s |"
                     % (row["seq"], add[0], add[1], rate, 100 * rate / result["roofline"],
                        dot[0], dot[1], add[0] / dot[0], peer, check))
    return lines


def main():
    result = measure(arguments())
    print("\n".join(table(result)))
    return 1 if result["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
