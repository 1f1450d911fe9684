//===- Backends.h - the backends' classes ------------------------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Private to lib/Target; Compile.cpp's backendFor picks one.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_TARGET_BACKENDS_H
#define ATTNC_LIB_TARGET_BACKENDS_H

#include "attnc/Target/Backend.h"

namespace attnc {

/// The MLIR backend on a CPU target: every stage from normalized to the
/// shared object but halide and ptx; objects compiled kernel by kernel on
/// threads (MlirCpuBackend.cpp).
class MlirCpuBackend : public Backend {
public:
  llvm::Error emit(mlir::ModuleOp module, const Selection &selection, EmitStage stage,
                   const CompileOutput &output) const override;
  bool classifiesMaskModTiles() const override { return true; }
};

/// The MLIR backend on a CUDA target: the CPU backend's stages (its host code
/// is x86-64) plus ptx, the kernels' PTX (MlirCudaBackend.cpp).
class MlirCudaBackend : public MlirCpuBackend {
public:
  llvm::Error emit(mlir::ModuleOp module, const Selection &selection, EmitStage stage,
                   const CompileOutput &output) const override;
  bool classifiesMaskModTiles() const override { return false; }
};

/// The Halide backend: normalized and tiled, halide (the lowered pipelines),
/// ptx on its CUDA targets, obj and so (HalideBackend.cpp).
class HalideBackend : public Backend {
public:
  llvm::Error emit(mlir::ModuleOp module, const Selection &selection, EmitStage stage,
                   const CompileOutput &output) const override;
};

} // namespace attnc

#endif // ATTNC_LIB_TARGET_BACKENDS_H
