// The dense head_dim 128 kernel of issue 14's acceptance: 8 heads, f32, no mask.
attn.kernel @dense_d128 {
  attn.attention {num_heads = 8, head_dim = 128, dtype = f32, layout = bhsd, mask = #attn.full,
                  outputs = [out]}
}
