//===- Projection.h - attnc-run's projection kernels -------------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TOOLS_ATTNC_RUN_PROJECTION_H
#define ATTNC_TOOLS_ATTNC_RUN_PROJECTION_H

#include "SeededRun.h"

#include "attnc/Dialect/Attn/AttnOps.h"

namespace attnc {

/// seq: x's rows per batch entry.
struct ProjectionRunOptions : SeededRunOptions {
  bool noBias = false;
};

/// A projection kernel on seeded x, weight and bias (uniform in [-1, 1) over
/// sqrt(in_features); none with noBias: NULL): the reference's y written to
/// `dir` with the inputs as .npy; with a kernel object, the kernel timed
/// (median and best, GFLOPS, % of the FMA peak) and its y compared with the
/// reference's (|got - ref| <= rtol (|ref| + max |ref|)).
llvm::Error runProjection(mlir::attn::ProjectionOp op, const ProjectionRunOptions &options);

} // namespace attnc

#endif // ATTNC_TOOLS_ATTNC_RUN_PROJECTION_H
