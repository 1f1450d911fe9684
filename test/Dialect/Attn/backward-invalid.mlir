// Every spec the backward kernel does not build is a diagnostic that says why.
// RUN: attnc-opt %s --split-input-file --verify-diagnostics

attn.kernel @mixed {
  // expected-error @below {{a backward kernel writes the gradients dq, dk and dv together and nothing else (its out and lse are inputs); got outputs = [out, dq, dk, dv]}}
  attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd, mask = #attn.full,
                  outputs = [out, dq, dk, dv]}
}

// -----

attn.kernel @some {
  // expected-error @below {{got outputs = [dq]}}
  attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd, mask = #attn.full,
                  outputs = [dq]}
}

// -----

attn.kernel @decode {
  // expected-error @below {{a backward kernel (outputs = [dq, dk, dv]) is built for batched q, k, v of one length each; drop num_splits, kv_cache and varlen}}
  attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd, mask = #attn.full,
                  outputs = [dq, dk, dv], num_splits = 0}
}

// -----

attn.kernel @varlen {
  // expected-error @below {{drop num_splits, kv_cache and varlen}}
  attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bshd, mask = #attn.full,
                  outputs = [dq, dk, dv], varlen = cu_seqlens}
}

// -----

attn.kernel @forward_tiled {
  // expected-error @below {{computes the forward; a spec with outputs = [dq, dk, dv] tiles to attn.flash_backward}}
  attn.flash {num_heads = 2, num_kv_heads = 2, head_dim = 32, dtype = f32, layout = bhsd,
              mask = #attn.full, scale = 0.25, outputs = [dq, dk, dv], block_q = 64, block_kv = 64}
}

// -----

attn.kernel @backward_of_out {
  // expected-error @below {{computes gradients: outputs must be [dq, dk, dv]}}
  attn.flash_backward {num_heads = 2, num_kv_heads = 2, head_dim = 32, dtype = f32, layout = bhsd,
                       mask = #attn.full, scale = 0.25, outputs = [out], block_q = 64,
                       block_kv = 64, kv_chunks = 4}
}

// -----

attn.kernel @chunks {
  // expected-error @below {{kv_chunks must be 1 to 64, got 0}}
  attn.flash_backward {num_heads = 2, num_kv_heads = 2, head_dim = 32, dtype = f32, layout = bhsd,
                       mask = #attn.full, scale = 0.25, outputs = [dq, dk, dv], block_q = 64,
                       block_kv = 64, kv_chunks = 0}
}

// -----

attn.kernel @no_chunks {
  // expected-error @below {{attention parameter 'kv_chunks' is required}}
  attn.flash_backward {num_heads = 2, num_kv_heads = 2, head_dim = 32, dtype = f32, layout = bhsd,
                       mask = #attn.full, scale = 0.25, outputs = [dq, dk, dv], block_q = 64,
                       block_kv = 64}
}

// -----

attn.kernel @unknown_output {
  // expected-error @+2 {{unknown output 'dx'; expected out, lse, weights or the gradients dq, dk, dv}}
  attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd, mask = #attn.full,
                  outputs = [dx]}
}
