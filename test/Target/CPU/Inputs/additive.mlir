// Additive (Bahdanau) scores, scale * sum_d v_d tanh(q_d + k_d) (additive-numerics.test):
// a per-head v with causal GQA and a head_dim that is not a multiple of the vector width; a
// shared v in bf16 with a scale; a sliding window with the weights output; f16 with a
// soft-capping score_mod on top.
attn.kernel @per_head {
  attn.attention {num_heads = 4, num_kv_heads = 2, head_dim = 40, dtype = f32, layout = bhsd,
                  mask = #attn.causal<bottom_right>, outputs = [out, lse],
                  inputs = [va: f32 [heads, head_dim]], additive = @va}
}
attn.kernel @shared_bf16 {
  attn.attention {num_heads = 2, head_dim = 64, dtype = bf16, layout = bshd, mask = #attn.full,
                  scale = 0.5, outputs = [out, lse], inputs = [va: f32 [head_dim]],
                  additive = @va}
}
attn.kernel @window_weights {
  attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd,
                  mask = #attn.sliding_window<left = 20, right = 5>, max_seq = [256, 256],
                  outputs = [out, weights], inputs = [va: f32 [head_dim]], additive = @va}
}
attn.kernel @softcap_f16 {
  attn.attention {num_heads = 2, head_dim = 32, dtype = f16, layout = bshd,
                  mask = #attn.causal<top_left>, outputs = [out, lse],
                  inputs = [va: f32 [heads, head_dim]], additive = @va}
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %cap = arith.constant 2.0 : f32
    %x = arith.divf %s, %cap : f32
    %t = math.tanh %x : f32
    %r = arith.mulf %t, %cap : f32
    attn.yield %r : f32
  }
}
