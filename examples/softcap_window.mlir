// Gemma-2-style layer: a 4096-token sliding window with tanh soft-capping of the scores
// at 50 (score = 50 * tanh(score / 50)).
attn.kernel @softcap_window {
  attn.attention {num_heads = 16, num_kv_heads = 8, head_dim = 256, dtype = bf16,
                  layout = bshd, mask = #attn.sliding_window<left = 4095, right = 0>,
                  outputs = [out]}
    score_mod {
    ^bb0(%score: f32, %b: index, %h: index, %q: index, %kv: index):
      %cap = arith.constant 50.0 : f32
      %x = arith.divf %score, %cap : f32
      %t = math.tanh %x : f32
      %capped = arith.mulf %t, %cap : f32
      attn.yield %capped : f32
    }
}
