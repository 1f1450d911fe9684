// attn-normalize's linear-chunk (the schedule's `chunk`): a causal linear attention takes it
// as its chunk, over the spec's; a non-causal one has no chunk and is left alone; values
// other than 32, 64 and 128 are refused.
// RUN: attnc-opt %s --attn-normalize="linear-chunk=32" | FileCheck %s
// RUN: attnc-opt %s --attn-normalize | FileCheck %s --check-prefix=SPEC
// RUN: not attnc-opt %s --attn-normalize="linear-chunk=48" 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK-LABEL: @decoder
// CHECK: causal = true, chunk = 32
// SPEC-LABEL: @decoder
// SPEC: causal = true}
attn.kernel @decoder {
  attn.linear_attention {num_heads = 4, head_dim = 32, dtype = f32, layout = bhsd,
                         feature_map = elu1, causal = true}
}
// CHECK-LABEL: @decoder_128
// CHECK: causal = true, chunk = 32
// SPEC-LABEL: @decoder_128
// SPEC: causal = true, chunk = 128
attn.kernel @decoder_128 {
  attn.linear_attention {num_heads = 4, head_dim = 32, dtype = f32, layout = bhsd,
                         feature_map = relu, causal = true, chunk = 128}
}
// CHECK-LABEL: @encoder
// CHECK-NOT: chunk
// CHECK: }
attn.kernel @encoder {
  attn.linear_attention {num_heads = 4, head_dim = 32, dtype = f32, layout = bhsd,
                         feature_map = elu1}
}
// BAD: error: linear-chunk must be 32, 64 or 128, got 48
