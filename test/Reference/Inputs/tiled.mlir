attn.kernel @causal {
  attn.attention {num_heads = 2, head_dim = 16, dtype = f32, layout = bhsd, mask = #attn.causal<top_left>, outputs = [out, lse]}
}
attn.kernel @with_weights {
  attn.attention {num_heads = 2, head_dim = 16, dtype = f32, layout = bhsd, mask = #attn.full, max_seq = [32, 32], outputs = [out, weights]}
}
