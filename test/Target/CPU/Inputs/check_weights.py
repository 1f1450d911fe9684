#!/usr/bin/env python3
"""Checks a compiled kernel's top-left causal attention weights (weights.npy, [batch, heads,
seq_q, seq_kv]): every row sums to 1 within 1e-5, every masked entry (key j > query i) is
exactly 0, every kept entry is positive."""
import sys

import numpy as np

weights = np.load(sys.argv[1])
batch, heads, seq_q, seq_kv = weights.shape
masked = np.arange(seq_kv)[None, :] > np.arange(seq_q)[:, None]
masked = np.broadcast_to(masked, weights.shape)
worst = float(np.abs(weights.astype(np.float64).sum(-1) - 1).max())
assert worst <= 1e-5, "a row sums to 1 + %g" % worst
assert np.all(weights[masked] == 0), "%d masked entries are not 0" % np.count_nonzero(weights[masked])
assert np.all(weights[~masked] > 0), "a kept entry is not positive"
print("weights %s: rows sum to 1 within 1e-5 (worst %.1e); %d masked entries exactly 0"
      % (list(weights.shape), worst, masked.sum()))
