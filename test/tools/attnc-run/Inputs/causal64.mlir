// A causal f32 kernel, head_dim 64, for attnc-run's tolerance test.
attn.kernel @big {
  attn.attention {num_heads = 2, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.causal<top_left>, outputs = [out, lse]}
}
