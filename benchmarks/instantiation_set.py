#!/usr/bin/env python3
"""Writes a spec of about 1,000 kernels, the size of FlashAttention's instantiation set.

5 masks x 3 dtypes x 7 head dims x 10 (heads, kv_heads) shapes = 1,050 kernels, to stdout.
`attnc` compiles a spec's kernels in parallel (--jobs); docs/Reliability.md times this one:

    benchmarks/instantiation_set.py > set.mlir
    /usr/bin/time -f "%e s %M KB" build/bin/attnc set.mlir --target x86-64-avx512 -o set.o
"""

MASKS = [
    "#attn.full",
    "#attn.causal<top_left>",
    "#attn.causal<bottom_right>",
    "#attn.sliding_window<left = 255, right = 0>",
    "#attn.sliding_window<left = 127, right = 127>",
]
DTYPES = ["f32", "f16", "bf16"]
HEAD_DIMS = [32, 64, 80, 96, 128, 192, 256]
# (query heads, kv heads): MHA, GQA and MQA shapes of common models.
HEADS = [(8, 8), (8, 2), (8, 1), (16, 16), (16, 4), (32, 32), (32, 8), (32, 4), (64, 8),
         (12, 12)]


def main():
    count = 0
    for mask in MASKS:
        for dtype in DTYPES:
            for dim in HEAD_DIMS:
                for heads, kv_heads in HEADS:
                    print("attn.kernel @k%d {\n  attn.attention {num_heads = %d, "
                          "num_kv_heads = %d, head_dim = %d, dtype = %s, layout = bshd, "
                          "mask = %s, outputs = [out, lse]}\n}" %
                          (count, heads, kv_heads, dim, dtype, mask))
                    count += 1


if __name__ == "__main__":
    main()
