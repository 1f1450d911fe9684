#!/usr/bin/env python3
"""attnc-run --reference --backward's dq, dk, dv for examples/alibi.mlir (causal top-left, ALiBi
slopes 2^-(h+1), scale 1/sqrt(head_dim)) against torch autograd on float64 math attention over
the same q, k, v and d_out (the .npy files attnc-run wrote): max abs difference at most 1e-6
(the files hold f32; the gradients are at most about 2). Prints PASS / FAIL per tensor."""
import sys

import numpy as np
import torch


def main(directory):
    load = lambda name: torch.tensor(np.load("%s/%s.npy" % (directory, name)).astype(np.float64))
    q, k, v = (load(n).requires_grad_() for n in ("q", "k", "v"))
    batch, heads, seq, dim = q.shape
    i, j = torch.arange(seq)[:, None], torch.arange(seq)[None, :]
    slopes = torch.tensor([2.0 ** -(h + 1) for h in range(heads)], dtype=torch.float64)
    scores = q @ k.transpose(-1, -2) / dim ** 0.5 + slopes[:, None, None] * (j - i)
    out = torch.softmax(scores.masked_fill(j > i, float("-inf")), -1) @ v
    out.backward(load("d_out"))
    ok = True
    for name, tensor in (("dq", q), ("dk", k), ("dv", v)):
        diff = (tensor.grad - load(name)).abs().max().item()
        ok &= diff <= 1e-6
        print("%s %s: max abs difference %.1e, max |grad| %.2f"
              % ("PASS" if diff <= 1e-6 else "FAIL", name, diff, tensor.grad.abs().max()))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
