//===- CpuFamilyFacts.h - What the Halide CPU-only families share -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// attn.projection and attn.linear_attention are built by the Halide backend
// on its CPU targets only: their plain-data problems start alike.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CONVERSION_ATTNTOHALIDE_CPUFAMILYFACTS_H
#define ATTNC_LIB_CONVERSION_ATTNTOHALIDE_CPUFAMILYFACTS_H

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Target/Halide/FlashPipeline.h"

namespace mlir::attn {

/// The element type of a verified f32, f16 or bf16 dtype.
inline attnc::halide::ElemType halideElemType(Type elem) {
  return elem.isF16()    ? attnc::halide::ElemType::f16
         : elem.isBF16() ? attnc::halide::ElemType::bf16
                         : attnc::halide::ElemType::f32;
}

/// An error at `op` when `target` is one of the Halide backend's GPU targets.
inline LogicalResult refuseHalideGpuTarget(Operation *op, StringRef target) {
  if (!llvm::is_contained(attnc::halide::kHalideGpuTargets, target))
    return success();
  return op->emitOpError("is built by the Halide backend on CPU targets only "
                         "(x86-64-avx512, x86-64-avx2), not for target ")
         << target;
}

/// The symbol of the kernel `op` computes.
inline std::string kernelName(Operation *op) {
  return op->getParentOfType<KernelOp>().getSymName().str();
}

} // namespace mlir::attn

#endif // ATTNC_LIB_CONVERSION_ATTNTOHALIDE_CPUFAMILYFACTS_H
