// Training a GQA decoder layer needs both directions: one spec, two kernels. The forward
// writes out and lse; the backward takes q, k, v, out, lse and d_out (the loss's gradient
// on out) and writes dq, dk and dv. dk and dv sum over the 4 query heads of each KV head.
attn.kernel @causal_gqa_fwd {
  attn.attention {num_heads = 8, num_kv_heads = 2, head_dim = 64, dtype = f32,
                  layout = bhsd, mask = #attn.causal<top_left>, outputs = [out, lse]}
}
attn.kernel @causal_gqa_bwd {
  attn.attention {num_heads = 8, num_kv_heads = 2, head_dim = 64, dtype = f32,
                  layout = bhsd, mask = #attn.causal<top_left>, outputs = [dq, dk, dv]}
}
