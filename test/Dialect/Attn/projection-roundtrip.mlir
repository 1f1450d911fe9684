// attn.projection prints and parses back, in the custom and the generic form, with its default
// weight layout (pytorch).
// RUN: attnc-opt %s | attnc-opt | FileCheck %s
// RUN: attnc-opt %s --mlir-print-op-generic | attnc-opt | FileCheck %s

// CHECK-LABEL: attn.kernel @qkv
// CHECK: attn.projection {in_features = 768, out_features = 2304, dtype = f32, weights = pytorch}
attn.kernel @qkv {
  attn.projection {in_features = 768, out_features = 2304, dtype = f32}
}

// CHECK-LABEL: attn.kernel @matmul
// CHECK: attn.projection {in_features = 64, out_features = 10, dtype = bf16, weights = onnx}
attn.kernel @matmul {
  attn.projection {weights = onnx, dtype = bf16, out_features = 10, in_features = 64}
}
