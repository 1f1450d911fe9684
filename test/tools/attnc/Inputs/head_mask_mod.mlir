// A mask_mod of the head alone: heads 0 and 1 attend, the others keep nothing.
attn.kernel @k {
  attn.attention {num_heads = 4, head_dim = 16, dtype = f32, layout = bhsd, mask = #attn.full,
                  outputs = [out]}
    mask_mod {
    ^bb0(%b: index, %h: index, %q: index, %kv: index):
      %c = arith.constant 2 : index
      %keep = arith.cmpi ult, %h, %c : index
      attn.yield %keep : i1
    }
}
