//===- CudaTarget.cpp - the MLIR CUDA backend's targets -------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The CUDA targets of the MLIR backend, and what compiling for them needs
// registered: gpu-module-to-binary runs LLVM's NVPTX back end in process and
// the CUDA toolkit's ptxas for a cubin.
//
//===----------------------------------------------------------------------===//

#include "attnc/Target/CUDA/CudaTarget.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include <cstdlib>
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"

using namespace mlir;

llvm::ArrayRef<attnc::CudaTarget> attnc::mlirCudaTargets() {
  // Shared memory per block with the opt-in: sm_80 (A100) 163 KiB, sm_90
  // (H100, H200) 227 KiB. 64 Ki registers per SM, at most 255 per thread, on both.
  static const CudaTarget targets[] = {
      {"cuda-sm80", "sm_80", "", "an NVIDIA GPU, sm_80 or newer, and its driver",
       MmaKind::sync, "mma.sync", /*warpSize=*/32, /*rowsPerMmaGroup=*/16,
       /*maxSharedBytes=*/163 * 1024, /*registersPerSM=*/65536,
       /*maxRegistersPerThread=*/255, /*mmaK=*/16, /*defaultBlockQ=*/0},
      // PTX 8.6: LLVM emits TMA loads into shared::cta from that ISA on.
      // block_q 128: two warpgroups of 64 query rows per CTA.
      {"cuda-sm90a", "sm_90a", "+ptx86",
       "an NVIDIA Hopper GPU (sm_90: H100, H200), a CUDA 12+ driver", MmaKind::wgmma,
       "wgmma + TMA", /*warpSize=*/32, /*rowsPerMmaGroup=*/64,
       /*maxSharedBytes=*/227 * 1024, /*registersPerSM=*/65536,
       /*maxRegistersPerThread=*/255, /*mmaK=*/16, /*defaultBlockQ=*/128}};
  return targets;
}

const attnc::CudaTarget *attnc::lookupMlirCudaTarget(llvm::StringRef name) {
  for (const CudaTarget &target : mlirCudaTargets())
    if (target.name == name)
      return &target;
  return nullptr;
}

std::string attnc::cudaToolkitPath() {
  for (const char *name : {"CUDA_HOME", "CUDA_ROOT", "CUDA_PATH"})
    if (const char *path = std::getenv(name); path && *path)
      return path;
  return ATTNC_CUDA_TOOLKIT;
}

void attnc::registerCudaTranslations(DialectRegistry &registry) {
  // convert-gpu-to-nvvm takes the patterns of the other dialects in a kernel
  // (cf branches, arith, vector, ...) from these interfaces.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  vector::registerConvertVectorToLLVMInterface(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}
