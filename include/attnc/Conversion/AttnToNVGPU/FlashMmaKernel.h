//===- FlashMmaKernel.h - attn.flash on mma.sync tensor cores ---*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The CUDA kernels of one attn.flash: for sm_80 and later (mma.sync
// m16n8k16, ldmatrix, cp.async) and for sm_90a (wgmma, TMA, mbarriers), and
// the launch facts their host side needs.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_ATTNTONVGPU_FLASHMMAKERNEL_H
#define ATTNC_CONVERSION_ATTNTONVGPU_FLASHMMAKERNEL_H

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Target/CUDA/CudaTarget.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::attn {

using attnc::CudaTarget;
using attnc::MmaKind;

/// How one CTA of the kernel is laid out: one CTA per (query tile, head,
/// batch), one warp per 16 query rows, and in shared memory the query tile
/// and two stages each of K and V tiles.
///
/// mma.sync: rows padded to `rowStride` elements; f32 runs on TF32 (k = 8,
/// the same 32 bytes of a row per MMA as 16-bit types' k = 16), and when two
/// KV stages do not fit in shared memory one is used, without overlap.
/// wgmma: each tile stored as
/// head_dim / 64 column blocks of 64 elements (128 bytes) by rows, in the
/// 128-byte swizzle TMA writes and wgmma reads; then three mbarriers (Q,
/// KV stage 0, KV stage 1).
struct MmaKernelShape {
  MmaKind kind;
  int64_t blockQ, blockKv, dim;
  int64_t elemBytes;
  int64_t dimPadded; // head_dim rounded up to 32 bytes, the MMA's k (wgmma: 64)
  int64_t rowStride; // mma.sync: elements per shared-memory row
  int64_t stages;    // KV tiles in flight: 2, or 1 where 2 do not fit
  int64_t warpSize, warps, threads, sharedBytes;

  /// A decode kernel's (num_splits): mma.sync on any target, its query tile
  /// the rows of a KV head's query heads at every position (at least 64).
  static MmaKernelShape of(FlashOp op, const CudaTarget &target);
  static MmaKernelShape of(const CudaTarget &target, int64_t blockQ, int64_t blockKv,
                           int64_t dim, int64_t elemBytes);
  /// mma.sync: shared-memory rows of the query tile, of K stage s, of V
  /// stage s.
  int64_t queryRow() const { return 0; }
  int64_t keyRow(int64_t stage) const { return blockQ + stage * blockKv; }
  int64_t valueRow(int64_t stage) const { return blockQ + (stages + stage) * blockKv; }
  int64_t rows() const { return blockQ + 2 * stages * blockKv; }
  /// mma.sync: elements that make 16 bytes (one cp.async, one ldmatrix row).
  int64_t perChunk() const { return 16 / elemBytes; }
  /// wgmma: byte offsets of the query tile, of K / V stage s, of mbarrier i.
  int64_t queryBytes() const { return blockQ * dimPadded * 2; }
  int64_t kvTileBytes() const { return blockKv * dimPadded * 2; }
  int64_t keyOffset(int64_t stage) const { return queryBytes() + stage * kvTileBytes(); }
  int64_t valueOffset(int64_t stage) const { return queryBytes() + (2 + stage) * kvTileBytes(); }
  int64_t barrierOffset(int64_t i) const { return queryBytes() + 4 * kvTileBytes() + 8 * i; }
};

/// Why `op` cannot become a kernel for `target` ("" if it can).
std::string mmaKernelMisfit(FlashOp op, const CudaTarget &target);

/// The target a split-KV decode kernel is built for on `target`: its
/// mma.sync form (decode is bound by bandwidth; sm_90a runs mma.sync too).
CudaTarget decodeCudaTarget(const CudaTarget &target);
/// Its query tile: `rows` (the query heads of a KV head x seq_q's bound)
/// rounded up to whole warps, at least 64 so that 4 warps issue the copies.
inline int64_t decodeBlockQ(int64_t rows) {
  return std::max<int64_t>(64, (rows + 15) / 16 * 16);
}

/// The kernel attribute naming how many of its leading arguments are TMA
/// descriptors (CUtensorMap, 128 bytes) passed by value as grid constants
/// (attn-grid-constant-args gives them that form after the NVVM lowering,
/// which drops such argument attributes).
inline constexpr llvm::StringLiteral kTensorMapArgsAttr = "attn.tensor_map_args";

/// Builds `gpu.func @<name>` (a kernel) in `module` from `op`. Its arguments:
/// for wgmma first the tensor maps of q, k and v (!llvm.ptr, see
/// kTensorMapArgsAttr); then q, k, v, out as memref<?xT, 1> and lse as
/// memref<?xf32, 1> (the runtime's flat views; each is 5 kernel parameters,
/// an MLIR memref descriptor); with mod inputs, each input (memref<?xi32, 1>
/// or memref<?xf32, 1>) and the status word (memref<?xi32, 1>: a load
/// outside an input stores ATTNC_ITEM_INDEX_FAILURE + its argument there);
/// then the index params of attnc_runtime.h (as many as its kernel
/// interface has: with mod inputs batch and their strides follow ATTNC_P_COUNT).
gpu::GPUFuncOp buildMmaFlashKernel(FlashOp op, const CudaTarget &target,
                                   gpu::GPUModuleOp module, StringRef name);

/// A split-KV decode kernel (num_splits) as its two phases' kernels: the
/// attention (@name, CTA per (split, KV head, batch), MmaKernelShape::of's
/// threads and shared memory) and the merge (@name_merge, CTA per (head,
/// batch), decodeMergeThreads() threads, no shared memory). Both take the
/// same arguments: every view of the kernel interface, then the params.
std::pair<gpu::GPUFuncOp, gpu::GPUFuncOp> buildMmaDecodeKernels(FlashOp op,
                                                                const CudaTarget &target,
                                                                gpu::GPUModuleOp module,
                                                                StringRef name);
int64_t decodeMergeThreads();
/// The argument (and view) number of a decode kernel's first mod input.
int64_t decodeFirstInput(FlashOp op);

} // namespace mlir::attn

#endif // ATTNC_CONVERSION_ATTNTONVGPU_FLASHMMAKERNEL_H
