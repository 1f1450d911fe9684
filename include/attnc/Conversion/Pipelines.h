//===- Pipelines.h - attnc's pass pipelines ---------------------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_PIPELINES_H
#define ATTNC_CONVERSION_PIPELINES_H

#include "attnc/Target/CUDA/CudaTarget.h"
#include "mlir/Pass/PassManager.h"

namespace attnc {

/// The `loops` stage: cleanup and the vectorizable exp, still on func / scf /
/// memref / vector / arith / math.
void buildPrepareLoopsPipeline(mlir::OpPassManager &pm);

/// `loops` -> the LLVM dialect, with each kernel's C entry and descriptor;
/// `target` and `cpuNeeds` go into the descriptors (attn-emit-cpu-entry).
void buildLowerToLLVMPipeline(mlir::OpPassManager &pm, llvm::StringRef target = "",
                              int64_t cpuNeeds = 0);

/// What gpu-module-to-binary leaves in each gpu.binary.
enum class CudaOutput { cubin, ptx };

/// From the loops stage of a CUDA target (attn-lower-flash-to-nvgpu's output):
/// the gpu.modules to NVVM and through ptxas to `output`; for a cubin, then
/// embedded (attn-embed-gpu-binary) and the host side lowered with its C
/// entries.
void buildCudaPipeline(mlir::OpPassManager &pm, const CudaTarget &target, CudaOutput output);

/// Registers `attn-prepare-loops` and `attn-lower-to-llvm` with the pass
/// registry (for attnc-opt).
void registerPipelines();

} // namespace attnc

#endif // ATTNC_CONVERSION_PIPELINES_H
