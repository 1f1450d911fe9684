//===- InitAll.h - every dialect and pass attnc tools know ----------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The one place registration happens; every tool calls these.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_INITALL_H
#define ATTNC_INITALL_H

#include "attnc/Conversion/Pipelines.h"
#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Target/CUDA/CudaTarget.h"
#include "attnc/Transforms/Passes.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace attnc {

/// Dialects of every stage: attn (with arith and math inside score_mod /
/// mask_mod regions), then func / scf / memref / vector of the tiled and
/// loops stages (gpu / nvgpu / nvvm on CUDA), then LLVM.
inline void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::attn::AttnDialect, mlir::arith::ArithDialect,
                  mlir::math::MathDialect, mlir::func::FuncDialect,
                  mlir::scf::SCFDialect, mlir::memref::MemRefDialect,
                  mlir::vector::VectorDialect, mlir::LLVM::LLVMDialect,
                  mlir::gpu::GPUDialect, mlir::nvgpu::NVGPUDialect,
                  mlir::NVVM::NVVMDialect>();
  registerCudaTranslations(registry);
}

/// attnc's passes and pipelines, MLIR's generic passes (canonicalize, cse,
/// ...) and the upstream conversions the pipelines use.
inline void registerAllPasses() {
  mlir::attn::registerAttnPasses();
  mlir::registerTransformsPasses();
  mlir::registerConversionPasses();
  mlir::registerGPUPasses();
  registerPipelines();
}

} // namespace attnc

#endif // ATTNC_INITALL_H
