// ALiBi with its slopes from a tensor (per head, as models store them; make_inputs.py writes
// the paper's 2^(-8 (h + 1) / heads)), causal: score + slopes[h] * (kv - q).
attn.kernel @alibi_slopes {
  attn.attention {num_heads = 8, head_dim = 128, dtype = f32, layout = bhsd,
                  mask = #attn.causal<bottom_right>, outputs = [out, lse],
                  inputs = [slopes: f32 [heads]]}
    score_mod {
    ^bb0(%score: f32, %b: index, %h: index, %q: index, %kv: index):
      %slope = attn.load @slopes[%h] : f32
      %qi = arith.index_cast %q : index to i64
      %ki = arith.index_cast %kv : index to i64
      %d = arith.subi %ki, %qi : i64
      %df = arith.sitofp %d : i64 to f32
      %bias = arith.mulf %slope, %df : f32
      %r = arith.addf %score, %bias : f32
      attn.yield %r : f32
    }
}
