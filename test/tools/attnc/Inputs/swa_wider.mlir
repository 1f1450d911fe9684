// Same name and shapes as swa.mlir, different window: a kernel built from one must not
// pass as the other.
attn.kernel @swa {
  attn.attention {num_heads = 4, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd,
                  mask = #attn.sliding_window<left = 300, right = 0>, outputs = [out, lse]}
}
