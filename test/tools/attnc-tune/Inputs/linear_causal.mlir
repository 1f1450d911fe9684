// A causal linear attention that carries its state (linear.test): attnc-tune searches its
// chunk.
attn.kernel @linear_causal {
  attn.linear_attention {num_heads = 4, num_kv_heads = 2, head_dim = 32, dtype = f32,
                         layout = bhsd, feature_map = elu1, causal = true, state = carry}
}
