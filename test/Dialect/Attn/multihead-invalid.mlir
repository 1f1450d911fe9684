// Every multi-head attention spec the compiler does not take is a diagnostic that says why.
// RUN: attnc-opt %s --split-input-file --verify-diagnostics

attn.kernel @no_embed {
  // expected-error @below {{multi-head attention parameter 'embed_dim' is required}}
  attn.multihead_attention {dtype = f32} {
    attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bshd, mask = #attn.full, outputs = [out]}
  }
}

// -----

attn.kernel @weights {
  // expected-error @below {{unknown weights 'keras'; expected pytorch ([out, in], y = x W^T) or onnx ([in, out], y = x W)}}
  attn.multihead_attention {embed_dim = 64, dtype = f32, weights = keras} {
    attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bshd, mask = #attn.full, outputs = [out]}
  }
}

// -----

attn.kernel @wide {
  // expected-error @below {{embed_dim must be in 1 to 2048, got 4096}}
  attn.multihead_attention {embed_dim = 4096, dtype = f32} {
    attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bshd, mask = #attn.full, outputs = [out]}
  }
}

// -----

attn.kernel @empty {
  // expected-error @below {{holds exactly one attn.attention (its attention part) in its body}}
  attn.multihead_attention {embed_dim = 64, dtype = f32} {
  }
}

// -----

attn.kernel @bhsd {
  // expected-error @below {{runs its attention on the projections' f32 results, token-major: the attention needs dtype = f32, layout = bshd, outputs = [out]}}
  attn.multihead_attention {embed_dim = 64, dtype = bf16} {
    attn.attention {num_heads = 2, head_dim = 32, dtype = bf16, layout = bhsd, mask = #attn.full, outputs = [out]}
  }
}

// -----

attn.kernel @lse {
  // expected-error @below {{runs its attention on the projections' f32 results, token-major}}
  attn.multihead_attention {embed_dim = 64, dtype = f32} {
    attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bshd, mask = #attn.full, outputs = [out, lse]}
  }
}

// -----

attn.kernel @decode {
  // expected-error @below {{takes attentions of one length per batch without inputs: drop num_splits, kv_cache, varlen, inputs and additive}}
  attn.multihead_attention {embed_dim = 64, dtype = f32} {
    attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bshd, mask = #attn.full, outputs = [out], num_splits = 0}
  }
}

// -----

attn.kernel @backward {
  // expected-error @below {{computes the forward; its attention cannot output gradients}}
  attn.multihead_attention {embed_dim = 64, dtype = f32} {
    attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bshd, mask = #attn.full, outputs = [dq, dk, dv]}
  }
}

// -----

attn.kernel @key_padding_kind {
  // expected-error @below {{unknown key_padding 'mask'; expected none or lengths (an int32 key_lengths [batch])}}
  attn.multihead_attention {embed_dim = 64, dtype = f32, key_padding = mask} {
    attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bshd, mask = #attn.full, outputs = [out]}
  }
}

// -----

attn.kernel @key_padding_bottom_right {
  // expected-error @below {{masks keys past each sequence's length (key_padding = lengths); its attention's mask must not depend on the number of keys: align it top_left (the same without padding) and use no bigbird mask}}
  attn.multihead_attention {embed_dim = 64, dtype = f32, key_padding = lengths} {
    attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bshd, mask = #attn.causal<bottom_right>, outputs = [out]}
  }
}

// -----

attn.kernel @key_padding_bigbird {
  // expected-error @below {{its attention's mask must not depend on the number of keys}}
  attn.multihead_attention {embed_dim = 64, dtype = f32, key_padding = lengths} {
    attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bshd, mask = #attn.or<[#attn.causal<top_left>, #attn.bigbird<block = 16, window = 1, global = 1, random = 1, seed = 1>]>, outputs = [out]}
  }
}
