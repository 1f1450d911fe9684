// A relative position bias computed from the distance kv - q: here a smooth periodic one,
// score + 0.5 * sin(0.125 * (kv - q)), over a bidirectional window of 128 tokens each side.
attn.kernel @relative_bias {
  attn.attention {num_heads = 12, head_dim = 64, dtype = f32, layout = bshd,
                  mask = #attn.sliding_window<left = 128, right = 128>, outputs = [out]}
    score_mod {
    ^bb0(%score: f32, %b: index, %h: index, %q: index, %kv: index):
      %qi = arith.index_cast %q : index to i64
      %ki = arith.index_cast %kv : index to i64
      %d = arith.subi %ki, %qi : i64
      %df = arith.sitofp %d : i64 to f32
      %freq = arith.constant 0.125 : f32
      %amp = arith.constant 0.5 : f32
      %x = arith.mulf %df, %freq : f32
      %s = math.sin %x : f32
      %bias = arith.mulf %s, %amp : f32
      %r = arith.addf %score, %bias : f32
      attn.yield %r : f32
    }
}
