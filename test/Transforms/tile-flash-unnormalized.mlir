// attn-tile-flash states its precondition: specs must be normalized first.
// RUN: attnc-opt %s --attn-tile-flash --verify-diagnostics
attn.kernel @raw {
  // expected-error @below {{expects a normalized spec; run attn-normalize first}}
  attn.attention {num_heads = 2, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full,
                  outputs = [out]}
}
