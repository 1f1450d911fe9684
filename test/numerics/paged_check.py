#!/usr/bin/env python3
"""What the numeric matrix (paged.json) cannot show of a decode kernel with a paged KV cache
(kv_cache = paged<16>), through its C entry point (ctypes, DLPack tensors), as a host calls it:

- pages in any order: the paged kernel on a shuffled cache gives bit for bit the output of the
  contiguous kernel (kv_cache = lengths) on the same keys, for mixed lengths 0 to 5000;
- determinism: bit-identical out and lse on 1, 2, 3, 8 and 16 threads;
- hostile tables and lengths: an entry past num_pages or negative (in a row's unused tail too),
  a length past the cache or negative, an int64 table, a missing kv_lens: each an error
  (ATTNC_ERR_INDEX, ATTNC_ERR_DTYPE, ATTNC_ERR_NULL) that names the entry or tensor, with the
  outputs untouched (nothing was read through the table).

Prints PASS / FAIL lines and exits non-zero on a failure.
"""
import ctypes
import sys

import numpy as np

import device_run
from attnc._abi import Options

ERR_NULL, ERR_DTYPE, ERR_INDEX = 1, 2, 11
HEADS, KV_HEADS, DIM, SEQ_Q, PAGE = 8, 2, 64, 2, 16
CAPACITY = 5008  # 313 pages per sequence

SPEC = """attn.kernel @{name} {{
  attn.attention {{num_heads = {heads}, num_kv_heads = {kv}, head_dim = {dim}, dtype = f32,
                  layout = bhsd, mask = #attn.causal<bottom_right>, max_seq = [4, 100000],
                  outputs = [out, lse], num_splits = 5, kv_cache = {cache}}}
}}
"""


def build(args):
    """Compiles the paged and the contiguous kernel into one shared object; returns it loaded."""
    specs = "".join(SPEC.format(name=name, heads=HEADS, kv=KV_HEADS, dim=DIM, cache=cache)
                    for name, cache in (("paged", "paged<%d>" % PAGE), ("lengths", "lengths")))
    return device_run.build_so(args.attnc, specs, args.target, args.work, "paged")


def call(entry, tensors, threads=2):
    """(status, out, lse) of one call; out and lse start as 7s, what an error must leave."""
    q = tensors[0]
    out = np.full(q.shape, 7, np.float32)
    lse = np.full(q.shape[:3], 7, np.float32)
    arrays = [tensors[0], tensors[1], tensors[2], out, lse] + list(tensors[3:])
    ts = [None if a is None else device_run.host_tensor(a) for a in arrays]
    refs = [None if t is None else ctypes.byref(t) for t in ts]
    rc = entry(*refs, ctypes.byref(Options(threads, None)))
    return rc, out, lse


def check(name, ok, detail=""):
    return device_run.report(name, ok, detail)


def make_inputs(batch=4, seed=11):
    """q; contiguous k, v [batch, kv_heads, CAPACITY, dim]; the same as shuffled pages; the
    block table and mixed lengths."""
    rng = np.random.default_rng(seed)
    q = rng.uniform(-1, 1, (batch, HEADS, SEQ_Q, DIM)).astype(np.float32)
    k, v = (rng.uniform(-1, 1, (batch, KV_HEADS, CAPACITY, DIM)).astype(np.float32)
            for _ in range(2))
    max_pages = CAPACITY // PAGE
    table = rng.permutation(batch * max_pages).astype(np.int32).reshape(batch, max_pages)
    pages = []
    for kv in (k, v):
        cache = np.zeros((batch * max_pages, PAGE, KV_HEADS, DIM), np.float32)
        for b in range(batch):
            blocks = kv[b].reshape(KV_HEADS, max_pages, PAGE, DIM).transpose(1, 2, 0, 3)
            cache[table[b]] = blocks
        pages.append(cache)
    lens = np.array([0, 1, CAPACITY, 2050], np.int32)[:batch]
    return q, k, v, pages[0], pages[1], table, lens


def main():
    args = device_run.check_parser(__doc__).parse_args()
    library = build(args)
    paged, lengths = library.paged, library.lengths
    ok = True

    q, k, v, kc, vc, table, lens = make_inputs()
    rc0, out0, lse0 = call(lengths, (q, k, v, lens))
    runs = {t: call(paged, (q, kc, vc, lens, table), t) for t in (1, 2, 3, 8, 16)}
    rc, out, lse = runs[2]
    ok &= check("paged = contiguous, bit for bit", rc0 == 0 and rc == 0 and
                np.array_equal(out.view(np.uint32), out0.view(np.uint32)) and
                np.array_equal(lse.view(np.uint32), lse0.view(np.uint32)),
                "(kv_lens %s, pages shuffled)" % lens.tolist())
    same = all(r == 0 and np.array_equal(o.view(np.uint32), out.view(np.uint32)) and
               np.array_equal(s.view(np.uint32), lse.view(np.uint32))
               for r, o, s in runs.values())
    ok &= check("bit-identical over 1-16 threads", same)
    ok &= check("length 0: out 0, lse -inf", not out[0].any() and np.all(np.isneginf(lse[0])))

    def refused(name, status, text, tensors, entry=paged):
        rc, out, _ = call(entry, tensors)
        message = library.attnc_last_error().decode()
        return check(name, rc == status and text in message and np.all(out == 7), message)

    bad = table.copy()
    bad[1, 3] = table.size
    ok &= refused("table entry = num_pages: INDEX", ERR_INDEX,
                  "block_table[1, 3] = 1252, but its entries must lie in [0, num_pages) = "
                  "[0, 1252)", (q, kc, vc, lens, bad))
    bad = table.copy()
    bad[1, -1] = -1  # sequence 1 has 1 key: the row's unused tail is checked too
    ok &= refused("negative entry in a row's tail: INDEX", ERR_INDEX,
                  "block_table[1, 312] = -1", (q, kc, vc, lens, bad))
    too_long = lens.copy()
    too_long[3] = CAPACITY + 1
    ok &= refused("length past the cache: INDEX", ERR_INDEX,
                  "kv_lens[3] = 5009, but its entries must lie in [0, max_pages*page_size] = "
                  "[0, 5008]", (q, kc, vc, too_long, table))
    negative = lens.copy()
    negative[2] = -5
    ok &= refused("negative length: INDEX", ERR_INDEX, "kv_lens[2] = -5",
                  (q, kc, vc, negative, table))
    ok &= refused("contiguous length past seq_kv: INDEX", ERR_INDEX,
                  "kv_lens[3] = 5009, but its entries must lie in [0, seq_kv] = [0, 5008]",
                  (q, k, v, too_long), lengths)
    ok &= refused("int64 table: DTYPE", ERR_DTYPE, "block_table has dtype int64 but needs int32",
                  (q, kc, vc, lens, table.astype(np.int64)))
    ok &= refused("no kv_lens: NULL", ERR_NULL, "kv_lens is NULL", (q, kc, vc, None, table))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
