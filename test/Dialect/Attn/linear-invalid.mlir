// Every linear attention spec the compiler does not take is a diagnostic that says why.
// RUN: attnc-opt %s --split-input-file --verify-diagnostics

attn.kernel @no_map {
  // expected-error @below {{linear attention parameter 'feature_map' is required}}
  attn.linear_attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd}
}

// -----

attn.kernel @unknown_map {
  // expected-error @below {{unknown feature_map 'softmax'; expected identity, elu1 or relu}}
  attn.linear_attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd, feature_map = softmax}
}

// -----

attn.kernel @unknown_parameter {
  // expected-error @below {{unknown linear attention parameter 'mask'; expected one of num_heads, num_kv_heads, head_dim, value_dim, dtype, layout, feature_map, causal, normalize, scale, eps, chunk, state}}
  attn.linear_attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd, mask = #attn.full}
}

// -----

attn.kernel @twice {
  // expected-error @below {{linear attention parameter 'causal' is given twice}}
  attn.linear_attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd, feature_map = relu, causal = true, causal = false}
}

// -----

attn.kernel @not_bool {
  // expected-error @below {{expected true or false, got 'yes'}}
  attn.linear_attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd, feature_map = relu, causal = yes}
}

// -----

attn.kernel @unknown_state {
  // expected-error @below {{unknown state 'keep'; expected carry (take initial_state, write final_state)}}
  attn.linear_attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd, feature_map = relu, causal = true, state = keep}
}

// -----

attn.kernel @heads {
  // expected-error @below {{num_heads (6) must be a positive multiple of num_kv_heads (4)}}
  attn.linear_attention {num_heads = 6, num_kv_heads = 4, head_dim = 32, dtype = f32, layout = bhsd, feature_map = relu}
}

// -----

attn.kernel @wide {
  // expected-error @below {{value_dim must be in 1 to 256, got 512}}
  attn.linear_attention {num_heads = 2, head_dim = 32, value_dim = 512, dtype = f32, layout = bhsd, feature_map = relu}
}

// -----

attn.kernel @dtype {
  // expected-error @below {{dtype must be f32, f16 or bf16, got 'f64'}}
  attn.linear_attention {num_heads = 2, head_dim = 32, dtype = f64, layout = bhsd, feature_map = relu}
}

// -----

attn.kernel @scale {
  // expected-error @below {{scale must be finite and > 0, got -1}}
  attn.linear_attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd, feature_map = relu, scale = -1.0}
}

// -----

attn.kernel @eps_unnormalized {
  // expected-error @below {{eps is added to the normalizer, which normalize = false drops: remove one of them}}
  attn.linear_attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd, feature_map = relu, normalize = false, eps = 1.0e-3}
}

// -----

attn.kernel @chunk_noncausal {
  // expected-error @below {{chunk sizes the causal form's chunks; a non-causal kernel has none: remove it or add causal = true}}
  attn.linear_attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd, feature_map = relu, chunk = 64}
}

// -----

attn.kernel @chunk_size {
  // expected-error @below {{chunk must be 32, 64 or 128, got 48}}
  attn.linear_attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd, feature_map = relu, causal = true, chunk = 48}
}

// -----

attn.kernel @carry_noncausal {
  // expected-error @below {{state = carry continues a sequence (prefill, then decode steps), which needs causal = true}}
  attn.linear_attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd, feature_map = relu, state = carry}
}
