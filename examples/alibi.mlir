// ALiBi (Press et al. 2022): causal attention with a linear distance penalty whose slope
// halves from head to head: score + 2^(-8 (h + 1) / H) * (kv - q), here H = 8.
attn.kernel @alibi {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd,
                  mask = #attn.causal<top_left>, outputs = [out, lse]}
    score_mod {
    ^bb0(%score: f32, %b: index, %h: index, %q: index, %kv: index):
      %c1 = arith.constant 1 : index
      %h1 = arith.addi %h, %c1 : index
      %hi = arith.index_cast %h1 : index to i64
      %hf = arith.sitofp %hi : i64 to f32
      %step = arith.constant -1.0 : f32
      %e = arith.mulf %hf, %step : f32
      %slope = math.exp2 %e : f32
      %qi = arith.index_cast %q : index to i64
      %ki = arith.index_cast %kv : index to i64
      %d = arith.subi %ki, %qi : i64
      %df = arith.sitofp %d : i64 to f32
      %bias = arith.mulf %slope, %df : f32
      %r = arith.addf %score, %bias : f32
      attn.yield %r : f32
    }
}
