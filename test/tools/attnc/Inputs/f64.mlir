// An ordinary mistake: a dtype attnc does not compile (f64).
attn.kernel @k {
  attn.attention {num_heads = 2, head_dim = 32, dtype = f64, layout = bshd,
                  mask = #attn.full, outputs = [out]}
}
