//===- LinearProblemFromOp.h - attn.linear_attention for Halide -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_ATTNTOHALIDE_LINEARPROBLEMFROMOP_H
#define ATTNC_CONVERSION_ATTNTOHALIDE_LINEARPROBLEMFROMOP_H

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Target/Halide/LinearPipeline.h"

namespace mlir::attn {

/// The plain-data form of a linear attention kernel for `target`; an error
/// at the op's location for a GPU target.
FailureOr<attnc::halide::LinearProblem> linearProblemFromOp(LinearAttentionOp op,
                                                            StringRef target);

/// The most rows of one call of the rows pipeline: a causal kernel's chunk,
/// else the family's query tile (block_q).
int64_t linearRows(LinearAttentionOp op);

} // namespace mlir::attn

#endif // ATTNC_CONVERSION_ATTNTOHALIDE_LINEARPROBLEMFROMOP_H
