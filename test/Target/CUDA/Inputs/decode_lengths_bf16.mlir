attn.kernel @decode_lengths_bf16 {
  attn.attention {num_heads = 8, num_kv_heads = 2, head_dim = 64, dtype = bf16, layout = bhsd,
                  mask = #attn.causal<bottom_right>, max_seq = [4, 4096], outputs = [out, lse],
                  num_splits = 0, kv_cache = lengths}
}
