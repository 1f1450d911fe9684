// RUN: not attnc-opt %s --split-input-file --attn-normalize --attn-tile-flash --attn-lower-flash-to-nvgpu 2>&1 | FileCheck %s
// What the kernel does not cover is refused at the spec's line.
// CHECK: lower-flash-to-nvgpu-invalid.mlir:5:3: error: 'attn.flash' op cannot become a cuda-sm80 tensor-core kernel: the CUDA kernels run bf16 and f16 on tensor cores; f32 (TF32) is not implemented yet
attn.kernel @f32 {
  attn.attention {num_heads = 2, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
}

// -----

// CHECK: lower-flash-to-nvgpu-invalid.mlir:12:3: error: 'attn.flash' op cannot become a cuda-sm80 tensor-core kernel: head_dim must be a multiple of 8 (cp.async copies 16-byte pieces of rows)
attn.kernel @odd {
  attn.attention {num_heads = 2, head_dim = 36, dtype = bf16, layout = bhsd, mask = #attn.full, outputs = [out]}
}
