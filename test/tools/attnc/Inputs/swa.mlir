attn.kernel @swa {
  attn.attention {num_heads = 4, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd,
                  mask = #attn.sliding_window<left = 255, right = 0>, outputs = [out, lse]}
}
