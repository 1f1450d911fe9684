attn.kernel @dense {
  attn.attention {num_heads = 8, head_dim = 128, dtype = f32, layout = bhsd, mask = #attn.full,
                  outputs = [out]}
}
