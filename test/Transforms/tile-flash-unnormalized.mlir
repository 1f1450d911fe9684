// attn-tile-flash states its precondition: specs must be normalized first; and its options
// are checked.
// RUN: attnc-opt %s --attn-tile-flash --verify-diagnostics
// RUN: not attnc-opt %s --attn-normalize --attn-tile-flash="block-kv=-1" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: attn-tile-flash: block-q, block-kv and kv-chunks must be >= 0 (0: automatic), the automatic sizes and block-q-multiple >= 1; got block-q 0, block-kv -1, kv-chunks 0 and a rule value of 1
// RUN: not attnc-opt %s --attn-normalize --attn-tile-flash="auto-block-q=0" 2>&1 | FileCheck %s --check-prefix=RULE
// RULE: error: attn-tile-flash: {{.*}}; got block-q 0, block-kv 0, kv-chunks 0 and a rule value of 0
attn.kernel @raw {
  // expected-error @below {{expects a normalized spec; run attn-normalize first}}
  attn.attention {num_heads = 2, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full,
                  outputs = [out]}
}
