//===- InitAll.cpp - every dialect and pass attnc tools know --------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "attnc/InitAll.h"

#include "attnc/Conversion/Pipelines.h"
#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Target/CUDA/CudaTarget.h"
#include "attnc/Transforms/Passes.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void attnc::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::attn::AttnDialect, mlir::arith::ArithDialect,
                  mlir::math::MathDialect, mlir::func::FuncDialect,
                  mlir::scf::SCFDialect, mlir::memref::MemRefDialect,
                  mlir::vector::VectorDialect, mlir::LLVM::LLVMDialect,
                  mlir::gpu::GPUDialect, mlir::nvgpu::NVGPUDialect,
                  mlir::NVVM::NVVMDialect>();
  registerCudaTranslations(registry);
}

void attnc::registerAllPasses() {
  mlir::attn::registerAttnPasses();
  mlir::registerTransformsPasses();
  mlir::registerConversionPasses();
  mlir::registerGPUPasses();
  registerPipelines();
}
