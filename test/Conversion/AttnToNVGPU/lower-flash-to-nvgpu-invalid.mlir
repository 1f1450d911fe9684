// RUN: not attnc-opt %s --split-input-file --attn-normalize --attn-tile-flash --attn-lower-flash-to-nvgpu 2>&1 | FileCheck %s
// RUN: not attnc-opt %s --split-input-file --attn-normalize --attn-tile-flash=block-q=64 --attn-lower-flash-to-nvgpu=target=cuda-sm90a 2>&1 | FileCheck %s --check-prefix=HOPPER
// What a kernel does not cover is refused at the spec's line: f32 on the wgmma kernel (the
// mma.sync kernel runs it on TF32), a head_dim that is not whole 16-byte pieces.
// HOPPER: lower-flash-to-nvgpu-invalid.mlir:7:3: error: 'attn.flash' op cannot become a cuda-sm90a tensor-core kernel: the wgmma kernel runs bf16 and f16; for f32 use cuda-sm80, whose TF32 kernel runs on Hopper too
attn.kernel @f32 {
  attn.attention {num_heads = 2, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
}

// -----

// CHECK: lower-flash-to-nvgpu-invalid.mlir:15:3: error: 'attn.flash' op cannot become a cuda-sm80 tensor-core kernel: head_dim must be a multiple of 8 (cp.async copies 16-byte pieces of rows)
// HOPPER: lower-flash-to-nvgpu-invalid.mlir:15:3: error: 'attn.flash' op cannot become a cuda-sm90a tensor-core kernel: head_dim must be a multiple of 8 (TMA needs 16-byte row strides)
attn.kernel @odd {
  attn.attention {num_heads = 2, head_dim = 36, dtype = bf16, layout = bhsd, mask = #attn.full, outputs = [out]}
}

// -----

// f32 rows are whole 16-byte pieces at multiples of 4.
// CHECK: lower-flash-to-nvgpu-invalid.mlir:23:3: error: 'attn.flash' op cannot become a cuda-sm80 tensor-core kernel: head_dim must be a multiple of 4 (cp.async copies 16-byte pieces of rows)
attn.kernel @odd_f32 {
  attn.attention {num_heads = 2, head_dim = 6, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
}

// -----

// The varlen kernel is the MLIR CPU backend's.
// CHECK: lower-flash-to-nvgpu-invalid.mlir:[[@LINE+2]]:3: error: 'attn.flash' op varlen = cu_seqlens (packed sequences) is built by the MLIR CPU backend only, not the MLIR CUDA backend for target cuda-sm80; pad the sequences to one length (batched bshd) there
attn.kernel @varlen {
  attn.attention {num_heads = 8, num_kv_heads = 2, head_dim = 64, dtype = bf16, layout = bshd, mask = #attn.full, outputs = [out], varlen = cu_seqlens}
}
