//===- InitAll.h - every dialect and pass attnc tools know ----------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The one place registration happens; every tool calls these.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_INITALL_H
#define ATTNC_INITALL_H

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace attnc {

/// Dialects a spec may use: attn, plus arith and math inside score_mod /
/// mask_mod regions.
inline void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::attn::AttnDialect, mlir::arith::ArithDialect,
                  mlir::math::MathDialect>();
}

/// attnc's passes and MLIR's generic ones (canonicalize, cse, ...).
inline void registerAllPasses() {
  mlir::attn::registerAttnPasses();
  mlir::registerTransformsPasses();
}

} // namespace attnc

#endif // ATTNC_INITALL_H
