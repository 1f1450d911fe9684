//===- ProjectionProblemFromOp.h - attn.projection for Halide ---*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_ATTNTOHALIDE_PROJECTIONPROBLEMFROMOP_H
#define ATTNC_CONVERSION_ATTNTOHALIDE_PROJECTIONPROBLEMFROMOP_H

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Target/Halide/ProjectionPipeline.h"

namespace mlir::attn {

/// The plain-data problem of a projection kernel for `target`; emits a
/// diagnostic on the op and fails on the Halide backend's GPU targets.
FailureOr<attnc::halide::ProjectionProblem> projectionProblemFromOp(ProjectionOp op,
                                                                    StringRef target);

} // namespace mlir::attn

#endif // ATTNC_CONVERSION_ATTNTOHALIDE_PROJECTIONPROBLEMFROMOP_H
