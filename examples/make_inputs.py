#!/usr/bin/env python3
"""Writes the input tensors an example's mods read, as .npy files for attnc-run --input
(and attnc explain --input): make_inputs.py EXAMPLE --batch B --seq N -o DIR prints the
--input arguments to pass.

  document_ids         document_id int32 [B, N]: --documents documents of random lengths
  relative_bias_table  bias float32 [heads, 257]: uniform in [-1, 1)
  alibi_slopes         slopes float32 [heads]: 2^(-8 (h + 1) / heads)
  prefix_lm            prefix int32 [B]: uniform in [0, N]
  additive             va float32 [heads, 128]: uniform in [-1, 1) (additive scores' v)
"""
import argparse
import os

import numpy as np


def document_ids(batch, seq, documents, rng):
    """Each sequence cut at documents - 1 distinct random places; ids count up from 0."""
    ids = np.empty((batch, seq), np.int32)
    for b in range(batch):
        cuts = np.sort(rng.choice(np.arange(1, seq), size=documents - 1, replace=False))
        ids[b] = np.searchsorted(cuts, np.arange(seq), side="right")
    return ids


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("example", choices=["document_ids", "relative_bias_table",
                                            "alibi_slopes", "prefix_lm", "additive"])
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--seq", type=int, required=True, help="seq_q = seq_kv")
    parser.add_argument("--heads", type=int, help="default: the example's num_heads")
    parser.add_argument("--documents", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-o", dest="out", default=".")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    heads = args.heads or {"relative_bias_table": 12, "alibi_slopes": 8,
                           "additive": 4}.get(args.example, 0)
    arrays = {
        "document_ids": lambda: {"document_id": document_ids(args.batch, args.seq,
                                                             args.documents, rng)},
        "relative_bias_table": lambda: {"bias": rng.uniform(-1, 1, (heads, 257))
                                        .astype(np.float32)},
        "alibi_slopes": lambda: {"slopes": np.exp2(-8.0 * (np.arange(heads) + 1) / heads)
                                 .astype(np.float32)},
        "prefix_lm": lambda: {"prefix": rng.integers(0, args.seq + 1, args.batch)
                              .astype(np.int32)},
        "additive": lambda: {"va": rng.uniform(-1, 1, (heads, 128)).astype(np.float32)},
    }[args.example]()
    os.makedirs(args.out, exist_ok=True)
    flags = []
    for name, array in arrays.items():
        path = os.path.join(args.out, name + ".npy")
        np.save(path, array)
        flags.append("--input %s=%s" % (name, path))
    print(" ".join(flags))


if __name__ == "__main__":
    main()
