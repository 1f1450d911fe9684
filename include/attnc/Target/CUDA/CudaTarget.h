//===- CudaTarget.h - the MLIR CUDA backend's targets -----------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TARGET_CUDA_CUDATARGET_H
#define ATTNC_TARGET_CUDA_CUDATARGET_H

#include "mlir/IR/DialectRegistry.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace attnc {

/// A CUDA target of the MLIR backend: its PTX architecture, the PTX ISA
/// features it asks LLVM for ("" for the default), and what it needs.
struct CudaTarget {
  llvm::StringRef name, chip, features, needs;
};

/// The MLIR backend's CUDA targets (cuda-sm80: mma.sync, for sm_80 and later;
/// cuda-sm90a: wgmma + TMA, Hopper only).
llvm::ArrayRef<CudaTarget> mlirCudaTargets();
const CudaTarget *lookupMlirCudaTarget(llvm::StringRef name);

/// The CUDA toolkit to compile with (ptxas, libdevice): $CUDA_HOME, $CUDA_ROOT
/// or $CUDA_PATH, else the one attnc was built with.
std::string cudaToolkitPath();

/// The dialect extensions and translations gpu-module-to-binary needs.
void registerCudaTranslations(mlir::DialectRegistry &registry);

} // namespace attnc

#endif // ATTNC_TARGET_CUDA_CUDATARGET_H
