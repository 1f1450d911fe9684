attn.kernel @first {
  attn.attention {num_heads = 2, head_dim = 16, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
}
attn.kernel @second {
  attn.attention {num_heads = 2, head_dim = 16, dtype = f16, layout = bshd, mask = #attn.causal<top_left>, max_seq = [32, 32], outputs = [out, lse]}
}
attn.kernel @blocks {
  attn.attention {num_heads = 2, head_dim = 16, dtype = f32, layout = bhsd, mask = #attn.block_sparse<block = [16, 16], layout = [[1, 0], [1, 1]]>, outputs = [out]}
}
attn.kernel @divides_by_zero {
  attn.attention {num_heads = 2, head_dim = 16, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
    mask_mod {
    ^bb0(%b: index, %h: index, %q: index, %kv: index):
      %r = arith.remui %q, %h : index
      %c0 = arith.constant 0 : index
      %keep = arith.cmpi eq, %r, %c0 : index
      attn.yield %keep : i1
    }
}
