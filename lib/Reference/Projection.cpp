//===- Projection.cpp - the reference semantics of projections ------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "attnc/Reference/Projection.h"

using namespace attnc;
using mlir::attn::ProjectionOp;

std::vector<double> attnc::projectRows(const std::vector<double> &x, int64_t rows, int64_t in,
                                       const HostTensor &w, const HostTensor &bias, int64_t out,
                                       bool transposed) {
  std::vector<double> y(rows * out);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double acc = bias.empty() ? 0.0 : bias.data[o];
      for (int64_t i = 0; i < in; ++i)
        acc += x[r * in + i] * w.data[transposed ? i * out + o : o * in + i];
      y[r * out + o] = acc;
    }
  return y;
}

llvm::SmallVector<int64_t, 2> attnc::projectionWeightShape(ProjectionOp op) {
  if (op.isOnnx())
    return {op.getIn(), op.getOut()};
  return {op.getOut(), op.getIn()};
}

llvm::Expected<HostTensor> attnc::evaluateProjection(ProjectionOp op, const HostTensor &x,
                                                     const HostTensor &weight,
                                                     const HostTensor &bias) {
  auto error = [](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  };
  int64_t in = op.getIn(), out = op.getOut();
  if (x.shape.size() != 3 || x.shape[2] != in)
    return error("x has shape " + x.shapeString() + "; expected [batch, seq, " +
                 llvm::Twine(in) + "]");
  if (llvm::ArrayRef<int64_t>(weight.shape) != llvm::ArrayRef(projectionWeightShape(op)))
    return error("the weight has shape " + weight.shapeString() + "; expected " +
                 shapeString(projectionWeightShape(op)));
  if (!bias.empty() && (bias.shape.size() != 1 || bias.shape[0] != out))
    return error("the bias has shape " + bias.shapeString() + "; expected [" +
                 llvm::Twine(out) + "]");
  HostTensor y(x.type, {x.shape[0], x.shape[1], out});
  y.data = projectRows(x.data, x.shape[0] * x.shape[1], in, weight, bias, out, op.isOnnx());
  for (double &value : y.data)
    value = roundTo(y.type, value);
  return std::move(y);
}
