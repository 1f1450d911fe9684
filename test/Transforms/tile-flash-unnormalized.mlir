// attn-tile-flash states its precondition: specs must be normalized first; and its options
// are checked.
// RUN: attnc-opt %s --attn-tile-flash --verify-diagnostics
// RUN: not attnc-opt %s --attn-normalize --attn-tile-flash="block-kv=-1" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: attn-tile-flash: block-q must be >= 0 (0: by head_dim), block-kv >= 0 (0: by dtype) and block-q-multiple >= 1, got 0, -1 and 1
attn.kernel @raw {
  // expected-error @below {{expects a normalized spec; run attn-normalize first}}
  attn.attention {num_heads = 2, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full,
                  outputs = [out]}
}
