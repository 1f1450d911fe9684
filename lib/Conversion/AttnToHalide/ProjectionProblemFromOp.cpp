//===- ProjectionProblemFromOp.cpp - attn.projection for Halide -----------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttnToHalide/ProjectionProblemFromOp.h"

#include "CpuFamilyFacts.h"

using namespace mlir;
using namespace mlir::attn;

FailureOr<attnc::halide::ProjectionProblem>
mlir::attn::projectionProblemFromOp(ProjectionOp op, StringRef target) {
  if (failed(refuseHalideGpuTarget(op, target)))
    return failure();
  attnc::halide::ProjectionProblem p;
  p.name = kernelName(op);
  p.in = op.getIn();
  p.dtype = halideElemType(op.getDtype());
  p.matmulWeights = op.isOnnx();
  return p;
}
