// Linear attention kernels (linear-numerics.test): causal with a carried state, GQA and
// head_dim / value_dim that are not multiples of the vector width, chunks of 32; causal bf16
// relu in chunks of 128, bshd, head_dim 48 and value_dim 20; non-causal f16 with its own
// scale and eps, MQA and a wider value_dim; unnormalized identity maps, causal and
// non-causal.
attn.kernel @causal_carry {
  attn.linear_attention {num_heads = 4, num_kv_heads = 2, head_dim = 40, value_dim = 24,
                         dtype = f32, layout = bhsd, feature_map = elu1, causal = true,
                         chunk = 32, state = carry}
}
attn.kernel @causal_bf16 {
  attn.linear_attention {num_heads = 2, head_dim = 48, value_dim = 20, dtype = bf16,
                         layout = bshd, feature_map = relu, causal = true, chunk = 128}
}
attn.kernel @noncausal_f16 {
  attn.linear_attention {num_heads = 4, num_kv_heads = 1, head_dim = 64, value_dim = 128,
                         dtype = f16, layout = bhsd, feature_map = elu1, scale = 0.125,
                         eps = 1.0e-03}
}
attn.kernel @identity_causal {
  attn.linear_attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd,
                         feature_map = identity, causal = true, normalize = false}
}
attn.kernel @identity_noncausal {
  attn.linear_attention {num_heads = 2, head_dim = 20, value_dim = 36, dtype = f32,
                         layout = bshd, feature_map = identity, normalize = false}
}
