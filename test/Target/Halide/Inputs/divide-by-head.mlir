attn.kernel @divide_by_head {
  attn.attention {num_heads = 2, head_dim = 16, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
    mask_mod {
    ^bb0(%b: index, %h: index, %q: index, %kv: index):
      %d = arith.divui %q, %h : index
      %keep = arith.cmpi ule, %d, %kv : index
      attn.yield %keep : i1
    }
}
