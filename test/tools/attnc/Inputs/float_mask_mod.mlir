// A mask_mod through floats (a key within half the query's position): the interval analysis
// does not follow floats, so no tile is decided and the kernels apply it per element.
attn.kernel @k {
  attn.attention {num_heads = 2, head_dim = 16, dtype = f32, layout = bhsd, mask = #attn.full,
                  outputs = [out]}
    mask_mod {
    ^bb0(%b: index, %h: index, %q: index, %kv: index):
      %qi = arith.index_cast %q : index to i64
      %ki = arith.index_cast %kv : index to i64
      %qf = arith.sitofp %qi : i64 to f32
      %kf = arith.sitofp %ki : i64 to f32
      %half = arith.constant 0.5 : f32
      %limit = arith.mulf %qf, %half : f32
      %keep = arith.cmpf ole, %kf, %limit : f32
      attn.yield %keep : i1
    }
}
