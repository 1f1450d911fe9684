"""Additive (Bahdanau) attention: attnc's kernel (additive = @va) against PyTorch eager with
the Keras formula (scores = sum(v * tanh(q[:, :, None] + k[:, None]), -1): a (B, H, N, N, d)
tensor), and against attnc's own dot-product kernel of the same shape, timed in turn.

    benchmarks/.venv/bin/python benchmarks/additive.py --seq 256 1024 2048

Columns: milliseconds median (best); pairs x d per second (G, attnc's row: one tanh each);
additive / dot: what the tanh costs over the dot-product kernel. PyTorch's column is left out
where its (B, H, N, N, d) tensor would pass --torch-limit GiB. Each row also checks attnc's
out against PyTorch's (float64) where both ran.
"""
import argparse
import sys

import torch

import attnc
from timing import timed_in_turn

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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq", type=int, nargs="+", default=[256, 1024, 2048])
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--target", default="host")
    parser.add_argument("--torch-limit", type=float, default=4.0,
                        help="GiB of PyTorch's (B, H, N, N, d) tensor it may build")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    module = attnc.compile(SPEC.format(heads=args.heads, dim=args.dim), target=args.target)
    print("| seq | attnc additive ms | G pairs x d / s | attnc dot ms | additive / dot | "
          "PyTorch eager ms | x over PyTorch |")
    print("|---|---|---|---|---|---|---|")
    failed = False
    for n in args.seq:
        gen = torch.Generator().manual_seed(n)
        q, k, v = (torch.randn(1, args.heads, n, args.dim, generator=gen) for _ in range(3))
        va = torch.randn(args.heads, args.dim, generator=gen) / args.dim ** 0.5
        calls = {
            "additive": lambda: module.additive(q, k, v, va, num_threads=args.threads),
            "dot": lambda: module.dot(q, k, v, num_threads=args.threads),
        }
        gib = args.heads * n * n * args.dim * 4 / 2 ** 30
        if gib <= args.torch_limit:
            calls["torch"] = lambda: keras_formula(q, k, v, va)
            want = keras_formula(*(x.double() for x in (q, k, v, va)))
            err = (calls["additive"]()[0].double() - want).abs().max().item()
            failed |= err > 1e-4
            check = " (max |out - PyTorch float64| %.1e)" % err
        else:
            check = " (PyTorch left out: %.1f GiB)" % gib
        times = timed_in_turn(calls, args.repeats)
        add, dot = times["additive"], times["dot"]
        rate = args.heads * n * n * args.dim / (add[0] * 1e-3) * 1e-9
        peer = "- | -"
        if "torch" in times:
            peer = "%.1f (%.1f) | %.1fx" % (times["torch"][0], times["torch"][1],
                                            times["torch"][0] / add[0])
        print("| %d | %.2f (%.2f) | %.2f | %.2f (%.2f) | %.1f | %s |%s"
              % (n, add[0], add[1], rate, dot[0], dot[1], add[0] / dot[0], peer, check))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
