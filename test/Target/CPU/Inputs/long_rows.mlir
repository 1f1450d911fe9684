// One head, head_dim 16: a long row at little reference cost (long-rows.test).
attn.kernel @long {
  attn.attention {num_heads = 1, head_dim = 16, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out, lse]}
}
