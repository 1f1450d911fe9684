// Every additive-score spec the compiler does not take is a diagnostic that says why.
// RUN: attnc-opt %s --split-input-file --verify-diagnostics

attn.kernel @no_input {
  // expected-error @below {{additive = @va names no input: declare it in inputs, e.g. inputs = [va: f32 [heads, head_dim]]}}
  attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd, mask = #attn.full,
                  outputs = [out], additive = @va}
}

// -----

attn.kernel @wrong_shape {
  // expected-error @below {{additive scores' vector 'va' must be f32 [head_dim] or [heads, head_dim]}}
  attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd, mask = #attn.full,
                  outputs = [out], inputs = [va: f32 [heads]], additive = @va}
}

// -----

attn.kernel @int_vector {
  // expected-error @below {{additive scores' vector 'va' must be f32 [head_dim] or [heads, head_dim]}}
  attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd, mask = #attn.full,
                  outputs = [out], inputs = [va: i32 [head_dim]], additive = @va}
}

// -----

attn.kernel @decode {
  // expected-error @below {{additive scores are built for prefill kernels (outputs out, lse, weights) of one length per batch; drop num_splits, kv_cache, varlen and the gradients}}
  attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd, mask = #attn.full,
                  outputs = [out], num_splits = 0, inputs = [va: f32 [head_dim]], additive = @va}
}

// -----

attn.kernel @backward {
  // expected-error @below {{additive scores are built for prefill kernels (outputs out, lse, weights) of one length per batch; drop num_splits, kv_cache, varlen and the gradients}}
  attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd, mask = #attn.full,
                  outputs = [dq, dk, dv], inputs = [va: f32 [head_dim]], additive = @va}
}

// -----

attn.kernel @not_a_symbol {
  attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd, mask = #attn.full,
                  // expected-error @below {{additive takes the name of an f32 input, as @name (additive = @va); got "va"}}
                  outputs = [out], inputs = [va: f32 [head_dim]], additive = "va"}
}
