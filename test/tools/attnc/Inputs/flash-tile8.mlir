// A tiled form written by hand whose 8 x 8 tiles are not a multiple of AVX-512's 16 lanes.
attn.kernel @k {
  attn.flash {num_heads = 2, num_kv_heads = 2, head_dim = 32, dtype = f32, layout = bshd,
  mask = #attn.full, scale = 0.17677669529663687, outputs = [out], block_q = 8, block_kv = 8}
}
