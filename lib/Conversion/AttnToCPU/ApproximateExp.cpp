//===- ApproximateExp.cpp - attn-approximate-exp --------------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Rewrites math.exp with MLIR's polynomial approximation so the softmax's
// vector exponentials stay in vector registers instead of becoming one libm
// call per lane.
//
//===----------------------------------------------------------------------===//

#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNAPPROXIMATEEXPPASS
#include "Attn/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct AttnApproximateExpPass
    : public mlir::attn::impl::AttnApproximateExpPassBase<AttnApproximateExpPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(
        patterns, [](StringRef name) { return name == "math.exp"; });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
