//===- MultiHead.cpp - the reference semantics of multi-head attention ----===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "attnc/Reference/MultiHead.h"

#include "attnc/Reference/Evaluator.h"
#include "attnc/Reference/KvCache.h"
#include "attnc/Reference/Projection.h"

using namespace attnc;
using mlir::attn::MultiHeadAttentionOp;

namespace {

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

} // namespace

int64_t attnc::qkvWidth(MultiHeadAttentionOp op) {
  auto a = op.getAttention();
  return (a.getHeads() + 2 * a.getKvHeads()) * a.getDim();
}

llvm::SmallVector<int64_t, 2> attnc::inWeightShape(MultiHeadAttentionOp op) {
  int64_t e = op.getEmbedSize(), qkv = qkvWidth(op);
  if (op.isOnnx())
    return {e, qkv};
  return {qkv, e};
}

llvm::SmallVector<int64_t, 2> attnc::outWeightShape(MultiHeadAttentionOp op) {
  int64_t e = op.getEmbedSize(), width = op.getAttention().getHeads() * op.getAttention().getDim();
  if (op.isOnnx())
    return {width, e};
  return {e, width};
}

llvm::Expected<MultiHeadResult> attnc::evaluateMultiHead(MultiHeadAttentionOp op,
                                                         const HostTensor &x,
                                                         const ProjectionWeights &w,
                                                         llvm::ArrayRef<int32_t> keyLengths) {
  auto attention = op.getAttention();
  int64_t e = op.getEmbedSize(), h = attention.getHeads(), g = attention.getKvHeads();
  int64_t d = attention.getDim(), qkv = qkvWidth(op);
  if (x.shape.size() != 3 || x.shape[2] != e)
    return error("x has shape " + x.shapeString() + "; expected [batch, seq, " +
                 llvm::Twine(e) + "]");
  if (llvm::ArrayRef<int64_t>(w.inWeight.shape) != llvm::ArrayRef(inWeightShape(op)) ||
      llvm::ArrayRef<int64_t>(w.outWeight.shape) != llvm::ArrayRef(outWeightShape(op)))
    return error("the weights have shapes " + w.inWeight.shapeString() + " and " +
                 w.outWeight.shapeString() + "; expected " + shapeString(inWeightShape(op)) +
                 " and " + shapeString(outWeightShape(op)));
  int64_t batch = x.shape[0], seq = x.shape[1], rows = batch * seq;
  if (op.hasKeyLengths() && int64_t(keyLengths.size()) != batch)
    return error("key_lengths has " + llvm::Twine(keyLengths.size()) + " entries for batch " +
                 llvm::Twine(batch));
  for (auto [b, keys] : llvm::enumerate(keyLengths))
    if (keys < 0 || keys > seq)
      return error("key_lengths[" + llvm::Twine(b) + "] = " + llvm::Twine(keys) +
                   ", outside [0, seq = " + llvm::Twine(seq) + "]");
  std::vector<double> proj = projectRows(x.data, rows, e, w.inWeight, w.inBias, qkv, op.isOnnx());
  // q [batch, seq, h, d], k and v [batch, seq, g, d]: the projection's
  // columns in q's heads, k's, v's order.
  HostTensor q(ElementType::f32, {batch, seq, h, d}), k(ElementType::f32, {batch, seq, g, d}),
      v(ElementType::f32, {batch, seq, g, d});
  for (int64_t r = 0; r < rows; ++r) {
    const double *row = proj.data() + r * qkv;
    std::copy_n(row, h * d, q.data.begin() + r * h * d);
    std::copy_n(row + h * d, g * d, k.data.begin() + r * g * d);
    std::copy_n(row + (h + g) * d, g * d, v.data.begin() + r * g * d);
  }
  // Key padding: sequence b attends its first key_lengths[b] keys.
  llvm::Expected<ReferenceResult> inner =
      op.hasKeyLengths() ? evaluateWithLengths(attention, q, k, v, keyLengths)
                         : evaluateReference(attention, q, k, v);
  if (!inner)
    return inner.takeError();
  MultiHeadResult r;
  r.out = HostTensor(x.type, {batch, seq, e});
  r.out.data = projectRows(inner->out.data, rows, h * d, w.outWeight, w.outBias, e, op.isOnnx());
  for (double &value : r.out.data)
    value = roundTo(r.out.type, value);
  r.keptPairs = inner->keptPairs;
  return std::move(r);
}
