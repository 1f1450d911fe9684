//===- FlashKernel.h - attn.flash to an x86-64 tile function ----*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_ATTNTOCPU_FLASHKERNEL_H
#define ATTNC_CONVERSION_ATTNTOCPU_FLASHKERNEL_H

#include "attnc/Dialect/Attn/AttnOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include <optional>

namespace mlir::attn {

/// How one attn.flash becomes loops: the vector width (f32 lanes), the
/// Q K^T register block (qkKeys keys x qkRowVectors vectors of query rows) and
/// the P V register block (pvRows query rows x pvVectors vectors of head_dim),
/// from the CPU target description and the schedule.
struct CpuKernelConfig {
  int64_t vectorWidth = 16;
  /// Architectural vector registers (zmm0-31: 32), which bound the decode
  /// kernel's register blocks.
  int64_t vectorRegisters = 32;
  int64_t qkKeys = 4;
  int64_t qkRowVectors = 4;
  int64_t pvRows = 4;
  int64_t pvVectors = 4;
  /// Reduction steps per iteration of the Q K^T and P V loops.
  int64_t unroll = 1;
  /// Full KV tiles (no mask to evaluate, no score_mod) take the softmax in
  /// the Q K^T register blocks against the running max (FlashSoftmax.cpp);
  /// otherwise a pass over each tile's scores does it.
  bool fusedSoftmax = false;
  /// The target has AVX512-BF16: bf16 kernels use vdpbf16ps.
  bool bf16Dot = false;
  /// x86-64 with AVX-512: exp scales by 2^n in one vscalefps.
  bool avx512Scalef = false;
  /// Adds a global counter `<kernel>_tiles_visited` incremented once per KV
  /// tile the kernel processes (test instrumentation).
  bool countTiles = false;
};

/// Builds `func.func @<kernel>_tile` (the C-interface tile function described
/// in attnc_runtime.h) for `op`, inserted before its kernel. Emits a
/// diagnostic and fails for what the CPU backend cannot do.
FailureOr<func::FuncOp> buildCpuFlashKernel(FlashOp op, const CpuKernelConfig &config);

/// An attn.flash with num_splits: the split-KV decode kernel's two tile
/// functions, `_mlir_ciface_<name>_tile` (b, g, split) and
/// `_mlir_ciface_<name>_merge_tile` (b, h) (DecodeKernel.cpp).
LogicalResult buildCpuDecodeKernel(FlashOp op, const CpuKernelConfig &config);

/// An attn.flash_backward: its three tile functions, `_mlir_ciface_<name>_tile`
/// (b, h, q_tile: the rows' D), `_mlir_ciface_<name>_dkdv_tile` (b, g, chunk:
/// dk, dv and the chunk's dq partial) and `_mlir_ciface_<name>_dq_tile` (b, h,
/// q_tile) (BackwardKernel.cpp).
LogicalResult buildCpuBackwardKernel(FlashBackwardOp op, const CpuKernelConfig &config);

/// An attn.linear_attention: causal, `_mlir_ciface_<name>_tile` (b, g: the
/// chunks in order); non-causal, `_mlir_ciface_<name>_tile` (b, g: the
/// state) and `_mlir_ciface_<name>_attention_tile` (b, h, q_tile)
/// (LinearKernel.cpp).
LogicalResult buildCpuLinearKernel(LinearAttentionOp op, const CpuKernelConfig &config);

/// An attn.multihead_attention whose attention is tiled: its three phases'
/// tile functions, `_mlir_ciface_<name>_tile` (b, m, n: the QKV projection),
/// `_mlir_ciface_<name>_attention_tile` (b, h, q_tile) and
/// `_mlir_ciface_<name>_out_tile` (b, m, n: the output projection), and the
/// attention's tile function `<name>__flash_tile` they call
/// (MultiHeadKernel.cpp).
LogicalResult buildCpuMultiHeadKernel(MultiHeadAttentionOp op, const CpuKernelConfig &config);

/// An attn.projection: its tile function `_mlir_ciface_<name>_tile` (b, m,
/// n: a 64 x 64 tile of y) (ProjectionKernel.cpp).
LogicalResult buildCpuProjectionKernel(ProjectionOp op, const CpuKernelConfig &config);

} // namespace mlir::attn

#endif // ATTNC_CONVERSION_ATTNTOCPU_FLASHKERNEL_H
