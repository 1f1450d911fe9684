// Causal GQA with soft-capping, as backward kernels (backward-deterministic.test).
attn.kernel @f32 {
  attn.attention {num_heads = 4, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bshd,
                  mask = #attn.causal<bottom_right>, outputs = [dq, dk, dv]}
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %cap = arith.constant 4.0 : f32
    %x = arith.divf %s, %cap : f32
    %t = math.tanh %x : f32
    %r = arith.mulf %t, %cap : f32
    attn.yield %r : f32
  }
}
attn.kernel @bf16 {
  attn.attention {num_heads = 4, num_kv_heads = 2, head_dim = 64, dtype = bf16, layout = bshd,
                  mask = #attn.causal<bottom_right>, outputs = [dq, dk, dv]}
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %cap = arith.constant 4.0 : f32
    %x = arith.divf %s, %cap : f32
    %t = math.tanh %x : f32
    %r = arith.mulf %t, %cap : f32
    attn.yield %r : f32
  }
}
