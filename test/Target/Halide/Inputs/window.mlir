attn.kernel @window {
  attn.attention {num_heads = 4, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.sliding_window<left = 127, right = 0>, outputs = [out, lse]}
}
