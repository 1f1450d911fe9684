// An f16 spec: q, k, v and out in f16 (lse in f32).
attn.kernel @half {
  attn.attention {num_heads = 2, head_dim = 64, dtype = f16, layout = bhsd, mask = #attn.full,
                  outputs = [out]}
}
