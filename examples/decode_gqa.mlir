// A decode step of a grouped-query model (Llama-3-8B's heads): 1 to 4 new query tokens per
// sequence against its KV cache, the query heads of each KV head computed together, the KV
// length split into up to 16 ranges (num_splits = 0: auto) merged by their log-sum-exp.
// bf16 K and V: on AVX512-BF16 the scores run on vdpbf16ps.
attn.kernel @decode_gqa {
  attn.attention {num_heads = 32, num_kv_heads = 8, head_dim = 128, dtype = bf16, layout = bhsd,
                  mask = #attn.causal<bottom_right>, max_seq = [4, 131072], outputs = [out, lse],
                  num_splits = 0}
}
