//===- FlashMmaKernel.h - attn.flash on mma.sync tensor cores ---*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The CUDA kernel of one attn.flash for sm_80 and later (mma.sync m16n8k16,
// ldmatrix, cp.async), and the launch facts its host side needs.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_ATTNTONVGPU_FLASHMMAKERNEL_H
#define ATTNC_CONVERSION_ATTNTONVGPU_FLASHMMAKERNEL_H

#include "attnc/Dialect/Attn/AttnOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::attn {

/// How one CTA of the kernel is laid out: one CTA per (query tile, head,
/// batch), one warp per 16 query rows, and in shared memory the query tile
/// and two stages each of K and V tiles, rows padded to `rowStride`.
struct MmaKernelShape {
  int64_t blockQ, blockKv, dim;
  int64_t dimPadded; // head_dim rounded up to the MMA's k = 16
  int64_t rowStride; // elements per shared-memory row
  int64_t warps, threads, sharedBytes;

  static MmaKernelShape of(FlashOp op);
  static MmaKernelShape of(int64_t blockQ, int64_t blockKv, int64_t dim, int64_t elemBytes);
  /// Shared-memory rows of the query tile, of K stage s, of V stage s.
  int64_t queryRow() const { return 0; }
  int64_t keyRow(int64_t stage) const { return blockQ + stage * blockKv; }
  int64_t valueRow(int64_t stage) const { return blockQ + (2 + stage) * blockKv; }
};

/// Why `op` cannot become an mma.sync kernel ("" if it can).
std::string mmaKernelMisfit(FlashOp op);

/// Builds `gpu.func @<name>` (a kernel) in `module` from `op`. Its arguments:
/// q, k, v, out as memref<?xT, 1> and lse as memref<?xf32, 1> (the runtime's
/// flat views; each is 5 kernel parameters, an MLIR memref descriptor), then
/// the ATTNC_P_COUNT index params of attnc_runtime.h.
gpu::GPUFuncOp buildMmaFlashKernel(FlashOp op, gpu::GPUModuleOp module, StringRef name);

} // namespace mlir::attn

#endif // ATTNC_CONVERSION_ATTNTONVGPU_FLASHMMAKERNEL_H
