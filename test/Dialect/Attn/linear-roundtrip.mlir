// attn.linear_attention prints and parses back, in the custom and the generic form, with
// its defaults left out (causal = false, normalize = true, scale 1, eps 1e-6, chunk 64);
// attn-normalize and attn-tile-flash leave it as it is (it has no tiled form of its own).
// RUN: attnc-opt %s | attnc-opt | FileCheck %s
// RUN: attnc-opt %s --mlir-print-op-generic | attnc-opt | FileCheck %s
// RUN: attnc-opt %s --attn-normalize --attn-tile-flash | FileCheck %s

// CHECK-LABEL: attn.kernel @defaults
// CHECK: attn.linear_attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, feature_map = elu1}
attn.kernel @defaults {
  attn.linear_attention {feature_map = elu1, layout = bhsd, dtype = f32, head_dim = 64,
                         num_heads = 8, causal = false, normalize = true}
}

// CHECK-LABEL: attn.kernel @everything
// CHECK: attn.linear_attention {num_heads = 8, num_kv_heads = 2, head_dim = 32, value_dim = 48, dtype = bf16, layout = bshd, feature_map = relu, causal = true, scale = 1.250000e-01, eps = 1.000000e-03, chunk = 128, state = carry}
attn.kernel @everything {
  attn.linear_attention {num_heads = 8, num_kv_heads = 2, head_dim = 32, value_dim = 48,
                         dtype = bf16, layout = bshd, feature_map = relu, causal = true,
                         scale = 0.125, eps = 1.0e-3, chunk = 128, state = carry}
}

// CHECK-LABEL: attn.kernel @unnormalized
// CHECK: attn.linear_attention {num_heads = 2, head_dim = 16, dtype = f16, layout = bhsd, feature_map = identity, normalize = false}
attn.kernel @unnormalized {
  attn.linear_attention {num_heads = 2, head_dim = 16, dtype = f16, layout = bhsd,
                         feature_map = identity, normalize = false}
}
