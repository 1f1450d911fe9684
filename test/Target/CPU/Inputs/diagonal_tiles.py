"""Counts the tiles of a causal (top-left) kernel over document ids that touch a (document,
document) diagonal block: tile (i, j) of block x block positions, j <= i (kept by causal),
whose query rows and key columns share a document. Prints that count for all heads of a
batch of one: what tile-skipping.test requires a document-id kernel to visit, exactly.

Usage: diagonal_tiles.py IDS.npy --block B --heads H
"""
import argparse

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("ids")
parser.add_argument("--block", type=int, required=True)
parser.add_argument("--heads", type=int, required=True)
args = parser.parse_args()
ids = np.load(args.ids)[0]
tiles = (len(ids) + args.block - 1) // args.block
docs = [set(ids[t * args.block:(t + 1) * args.block].tolist()) for t in range(tiles)]
touching = sum(1 for i in range(tiles) for j in range(i + 1) if docs[i] & docs[j])
print("tiles touching a (document, document) diagonal block under the causal mask, "
      "all heads: %d" % (touching * args.heads))
