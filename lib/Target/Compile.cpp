//===- Compile.cpp - compiling a spec to any stage, as a library ----------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Backends.h"
#include "Emit.h"

#include "attnc/Target/CUDA/CudaTarget.h"

using namespace attnc;

const Backend &attnc::backendFor(const Selection &selection) {
  static const MlirCpuBackend mlirCpu;
  static const MlirCudaBackend mlirCuda;
  static const HalideBackend halide;
  if (selection.backend == "halide")
    return halide;
  return lookupMlirCudaTarget(selection.gpuTarget) ? static_cast<const Backend &>(mlirCuda)
                                                   : mlirCpu;
}

llvm::Error attnc::compileSpec(mlir::ModuleOp module, const Selection &selection,
                               EmitStage stage, const CompileOutput &output) {
  if (stage == EmitStage::spec)
    return emit::printMlirStage(module, selection, stage, output);
  return backendFor(selection).emit(module, selection, stage, output);
}
