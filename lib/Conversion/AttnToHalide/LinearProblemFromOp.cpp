//===- LinearProblemFromOp.cpp - attn.linear_attention for Halide ---------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttnToHalide/LinearProblemFromOp.h"

#include "attnc/Interface/KernelInterface.h"

using namespace mlir;
using namespace mlir::attn;
using attnc::halide::FeatureMapKind;

FailureOr<attnc::halide::LinearProblem>
mlir::attn::linearProblemFromOp(LinearAttentionOp op, StringRef target) {
  if (llvm::is_contained(attnc::halide::kHalideGpuTargets, target))
    return op.emitOpError("is built by the Halide backend on CPU targets only "
                          "(x86-64-avx512, x86-64-avx2), not for target ")
           << target;
  attnc::halide::LinearProblem p;
  p.name = op->getParentOfType<KernelOp>().getSymName().str();
  p.headDim = op.getDim();
  p.valueDim = op.getValueDimOrDefault();
  Type elem = op.getDtype(); // the verifier allows f32, f16, bf16
  p.dtype = elem.isF16()    ? attnc::halide::ElemType::f16
            : elem.isBF16() ? attnc::halide::ElemType::bf16
                            : attnc::halide::ElemType::f32;
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
  p.rows = p.causal ? op.getChunkOrDefault() : attnc::LinearFacts{}.blockQ;
  p.normalize = !op.getUnnormalized();
  p.scale = op.getScaleOrDefault();
  p.eps = op.getEpsOrDefault();
  return p;
}
