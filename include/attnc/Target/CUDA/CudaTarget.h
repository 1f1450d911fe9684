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

#include <algorithm>
#include <cstdint>
#include <string>

namespace attnc {

/// Which tensor-core instructions a target's kernels are built on.
enum class MmaKind {
  /// mma.sync m16n8k16 with ldmatrix and cp.async: sm_80 and later.
  sync,
  /// wgmma m64nNk16 fed by TMA under mbarriers: sm_90a only.
  wgmma,
};

/// A CUDA target of the MLIR backend: its PTX architecture, the PTX ISA
/// features it asks LLVM for ("" for the default), what it needs, and the
/// facts of the GPU its kernels are laid out for (AttnToNVGPU reads these;
/// nothing else in the lowering knows a target by name).
struct CudaTarget {
  llvm::StringRef name, chip, features, needs;
  MmaKind mma;
  /// How `mma` reads in a schedule ("mma.sync", "wgmma + TMA").
  llvm::StringRef mmaName;
  /// Threads per warp.
  int64_t warpSize;
  /// Query rows per group of warps that issues one MMA: a warp (m16) for
  /// mma.sync, a warpgroup of 4 warps (m64) for wgmma.
  int64_t rowsPerMmaGroup;
  /// Shared memory one block may use (dynamic, with the opt-in past 48 KiB).
  int64_t maxSharedBytes;
  /// 32-bit registers: per SM, and at most per thread. A block of T threads,
  /// one per SM, gets min(perThread, perSM / T) each (explain prints it).
  int64_t registersPerSM, maxRegistersPerThread;
  /// The MMA's k for 16-bit types: tile sizes step by it.
  int64_t mmaK;
  /// block_q when the schedule sets none (0: attn-tile-flash's rule by head_dim).
  int64_t defaultBlockQ;

  /// Registers each of `threads` threads may use, one block per SM.
  int64_t registerBudget(int64_t threads) const {
    return std::min(maxRegistersPerThread, registersPerSM / threads);
  }
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
