attn.kernel @causal_gqa_small {
  attn.attention {num_heads = 4, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd,
                  mask = #attn.causal<bottom_right>, outputs = [out, lse]}
}
