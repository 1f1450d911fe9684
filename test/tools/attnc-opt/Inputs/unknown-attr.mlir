// A mask attribute that does not exist.
attn.kernel @k {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd,
                  mask = #attn.sparse<1>, outputs = [out]}
}
