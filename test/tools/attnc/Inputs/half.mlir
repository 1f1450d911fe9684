// An f16 spec: valid, but not (yet) one the CPU backend builds.
attn.kernel @half {
  attn.attention {num_heads = 2, head_dim = 64, dtype = f16, layout = bhsd, mask = #attn.full,
                  outputs = [out]}
}
