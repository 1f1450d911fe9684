// A learned relative-position bias (T5, Swin): a table of 257 biases per head for the
// distances -128..128, clamped beyond, added to each score:
// score + bias[h, clamp(kv - q, -128, 128) + 128].
attn.kernel @relative_bias_table {
  attn.attention {num_heads = 12, head_dim = 64, dtype = f32, layout = bshd,
                  mask = #attn.full, outputs = [out],
                  inputs = [bias: f32 [heads, 257]]}
    score_mod {
    ^bb0(%score: f32, %b: index, %h: index, %q: index, %kv: index):
      %lo = arith.constant -128 : index
      %hi = arith.constant 128 : index
      %d = arith.subi %kv, %q : index
      %c = arith.maxsi %d, %lo : index
      %e = arith.minsi %c, %hi : index
      %at = arith.addi %e, %hi : index
      %bias = attn.load @bias[%h, %at] : f32
      %r = arith.addf %score, %bias : f32
      attn.yield %r : f32
    }
}
