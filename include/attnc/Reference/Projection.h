//===- Projection.h - the reference semantics of projections -----*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// attn.projection evaluated in double, and the product the multi-head
// attention's reference projects with.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_REFERENCE_PROJECTION_H
#define ATTNC_REFERENCE_PROJECTION_H

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Reference/HostTensor.h"
#include "llvm/Support/Error.h"

namespace attnc {

/// y[r][o] = sum_i x[r][i] W(o, i) + bias[o] for `rows` rows of width `in`,
/// W [out, in] (`transposed`: [in, out]); an empty bias is none.
std::vector<double> projectRows(const std::vector<double> &x, int64_t rows, int64_t in,
                                const HostTensor &w, const HostTensor &bias, int64_t out,
                                bool transposed);

/// The weight's shape in `op`'s layout: [out, in] or (onnx) [in, out].
llvm::SmallVector<int64_t, 2> projectionWeightShape(mlir::attn::ProjectionOp op);

/// y [batch, seq, out_features] of `op` on x [batch, seq, in_features], in
/// the dtype (rounded); an empty bias is none.
llvm::Expected<HostTensor> evaluateProjection(mlir::attn::ProjectionOp op, const HostTensor &x,
                                              const HostTensor &weight, const HostTensor &bias);

} // namespace attnc

#endif // ATTNC_REFERENCE_PROJECTION_H
