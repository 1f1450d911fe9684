//===- ProjectionProblemFromOp.cpp - attn.projection for Halide -----------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttnToHalide/ProjectionProblemFromOp.h"

using namespace mlir;
using namespace mlir::attn;

FailureOr<attnc::halide::ProjectionProblem>
mlir::attn::projectionProblemFromOp(ProjectionOp op, StringRef target) {
  if (llvm::is_contained(attnc::halide::kHalideGpuTargets, target))
    return op.emitOpError("is built by the Halide backend on CPU targets only "
                          "(x86-64-avx512, x86-64-avx2), not for target ")
           << target;
  attnc::halide::ProjectionProblem p;
  p.name = op->getParentOfType<KernelOp>().getSymName().str();
  p.in = op.getIn();
  Type elem = op.getDtype(); // the verifier allows f32, f16, bf16
  p.dtype = elem.isF16()    ? attnc::halide::ElemType::f16
            : elem.isBF16() ? attnc::halide::ElemType::bf16
                            : attnc::halide::ElemType::f32;
  p.matmulWeights = op.isOnnx();
  return p;
}
