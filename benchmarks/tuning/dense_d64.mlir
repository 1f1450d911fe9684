// Dense head_dim 64: 8 heads, f32, no mask (a third tuning example beside issue 14's two).
attn.kernel @dense_d64 {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full,
                  outputs = [out]}
}
