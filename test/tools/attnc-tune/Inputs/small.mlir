// A small kernel for attnc-tune's tests: 2 heads, head_dim 32, causal.
attn.kernel @small {
  attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bshd,
                  mask = #attn.causal<top_left>, outputs = [out, lse]}
}
