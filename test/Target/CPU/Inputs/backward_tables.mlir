// Backward kernels whose score_mod reads learned f32 tables, a relative-position bias
// [heads, 33] and per-head soft-cap values (backward-tables.test): causal GQA, f32 and bf16;
// @short declares a bias of 16 columns that the score_mod reads past.
attn.kernel @f32 {
  attn.attention {num_heads = 4, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bshd,
                  mask = #attn.causal<bottom_right>, outputs = [dq, dk, dv],
                  inputs = [bias: f32 [heads, 33], cap: f32 [heads]]}
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %lo = arith.constant -16 : index
    %hi = arith.constant 16 : index
    %d = arith.subi %kv, %q : index
    %c = arith.maxsi %d, %lo : index
    %e = arith.minsi %c, %hi : index
    %at = arith.addi %e, %hi : index
    %bias = attn.load @bias[%h, %at] : f32
    %cap = attn.load @cap[%h] : f32
    %x = arith.divf %s, %cap : f32
    %t = math.tanh %x : f32
    %y = arith.mulf %t, %cap : f32
    %r = arith.addf %y, %bias : f32
    attn.yield %r : f32
  }
}
attn.kernel @bf16 {
  attn.attention {num_heads = 4, num_kv_heads = 2, head_dim = 64, dtype = bf16, layout = bshd,
                  mask = #attn.causal<bottom_right>, outputs = [dq, dk, dv],
                  inputs = [bias: f32 [heads, 33], cap: f32 [heads]]}
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %lo = arith.constant -16 : index
    %hi = arith.constant 16 : index
    %d = arith.subi %kv, %q : index
    %c = arith.maxsi %d, %lo : index
    %e = arith.minsi %c, %hi : index
    %at = arith.addi %e, %hi : index
    %bias = attn.load @bias[%h, %at] : f32
    %cap = attn.load @cap[%h] : f32
    %x = arith.divf %s, %cap : f32
    %t = math.tanh %x : f32
    %y = arith.mulf %t, %cap : f32
    %r = arith.addf %y, %bias : f32
    attn.yield %r : f32
  }
}
attn.kernel @short {
  attn.attention {num_heads = 4, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bshd,
                  mask = #attn.causal<bottom_right>, outputs = [dq, dk, dv],
                  inputs = [bias: f32 [heads, 16], cap: f32 [heads]]}
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %lo = arith.constant -16 : index
    %hi = arith.constant 16 : index
    %d = arith.subi %kv, %q : index
    %c = arith.maxsi %d, %lo : index
    %e = arith.minsi %c, %hi : index
    %at = arith.addi %e, %hi : index
    %bias = attn.load @bias[%h, %at] : f32
    %cap = attn.load @cap[%h] : f32
    %x = arith.divf %s, %cap : f32
    %t = math.tanh %x : f32
    %y = arith.mulf %t, %cap : f32
    %r = arith.addf %y, %bias : f32
    attn.yield %r : f32
  }
}
