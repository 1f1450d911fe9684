//===- LinearProblemFromOp.cpp - attn.linear_attention for Halide ---------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttnToHalide/LinearProblemFromOp.h"

#include "CpuFamilyFacts.h"

#include "attnc/Interface/KernelInterface.h"

using namespace mlir;
using namespace mlir::attn;
using attnc::halide::FeatureMapKind;

int64_t mlir::attn::linearRows(LinearAttentionOp op) {
  return op.getCausal() ? op.getChunkOrDefault() : attnc::LinearFacts{}.blockQ;
}

FailureOr<attnc::halide::LinearProblem>
mlir::attn::linearProblemFromOp(LinearAttentionOp op, StringRef target) {
  if (failed(refuseHalideGpuTarget(op, target)))
    return failure();
  attnc::halide::LinearProblem p;
  p.name = kernelName(op);
  p.headDim = op.getDim();
  p.valueDim = op.getValueDimOrDefault();
  p.dtype = halideElemType(op.getDtype());
  switch (op.getFeatureMap()) {
  case FeatureMap::identity:
    p.featureMap = FeatureMapKind::identity;
    break;
  case FeatureMap::elu1:
    p.featureMap = FeatureMapKind::elu1;
    break;
  case FeatureMap::relu:
    p.featureMap = FeatureMapKind::relu;
    break;
  }
  p.causal = op.getCausal();
  p.rows = linearRows(op);
  p.normalize = !op.getUnnormalized();
  p.scale = op.getScaleOrDefault();
  p.eps = op.getEpsOrDefault();
  return p;
}
