// Projection kernels (projection-numerics.test): nn.Linear weights in f32 and f16 with
// in_features and out_features not multiples of 64; MatMul (ONNX) weights in bf16 and f32.
attn.kernel @linear_f32 {
  attn.projection {in_features = 96, out_features = 200, dtype = f32, weights = pytorch}
}
attn.kernel @linear_f16 {
  attn.projection {in_features = 80, out_features = 64, dtype = f16, weights = pytorch}
}
attn.kernel @matmul_bf16 {
  attn.projection {in_features = 100, out_features = 70, dtype = bf16, weights = onnx}
}
attn.kernel @matmul_f32 {
  attn.projection {in_features = 128, out_features = 130, dtype = f32, weights = onnx}
}
