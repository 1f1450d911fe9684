// Linear attention (Katharopoulos et al. 2020): phi(q) (phi(k)^T v) with phi = elu + 1, so
// each KV head's keys and values fold into a head_dim x value_dim state and the cost grows
// linearly with the length. A causal decoder that carries its state from call to call (a
// prefill, then decode steps of one row each), and a non-causal encoder.
attn.kernel @linear_decoder {
  attn.linear_attention {num_heads = 8, num_kv_heads = 2, head_dim = 64, dtype = f32,
                         layout = bhsd, feature_map = elu1, causal = true, state = carry}
}
attn.kernel @linear_encoder {
  attn.linear_attention {num_heads = 8, head_dim = 64, dtype = bf16, layout = bshd,
                         feature_map = elu1}
}
