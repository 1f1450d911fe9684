//===- Linear.cpp - the reference semantics of linear attention -----------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "attnc/Reference/Linear.h"

#include <cmath>

using namespace attnc;
using mlir::attn::FeatureMap;
using mlir::attn::LinearAttentionOp;

namespace {

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

double featureMap(FeatureMap map, double x) {
  switch (map) {
  case FeatureMap::identity:
    return x;
  case FeatureMap::elu1:
    return x > 0 ? x + 1 : std::exp(x);
  case FeatureMap::relu:
    return x > 0 ? x : 0;
  }
  return x;
}

/// Element (b, h, s, d) of a [batch, heads, seq, dim] tensor in `layout`.
struct RowTensor {
  const HostTensor &t;
  bool bshd;
  double at(int64_t b, int64_t h, int64_t s, int64_t d) const { return t.data[index(b, h, s, d)]; }
  size_t index(int64_t b, int64_t h, int64_t s, int64_t d) const {
    const auto &n = t.shape;
    return bshd ? ((b * n[1] + s) * n[2] + h) * n[3] + d : ((b * n[1] + h) * n[2] + s) * n[3] + d;
  }
};

/// One (batch, query head) of the evaluation: phi(q) and phi(k) rows, then
/// every row's sums over the keys it sees.
struct HeadEvaluation {
  mutable LinearAttentionOp op;
  RowTensor q, k, v;
  int64_t seqQ, seqKv, dk, dv;

  std::vector<double> phiRows(const RowTensor &t, int64_t b, int64_t h, int64_t rows,
                              double scale) const {
    std::vector<double> phi(rows * dk);
    for (int64_t s = 0; s < rows; ++s)
      for (int64_t d = 0; d < dk; ++d)
        phi[s * dk + d] = scale * featureMap(op.getFeatureMap(), t.at(b, h, s, d));
    return phi;
  }

  void run(int64_t b, int64_t h, const HostTensor *s0, const HostTensor *z0,
           HostTensor &out) const {
    int64_t g = h / (op.getHeads() / op.getKvHeads());
    std::vector<double> pq = phiRows(q, b, h, seqQ, op.getScaleOrDefault());
    std::vector<double> pk = phiRows(k, b, g, seqKv, 1.0);
    RowTensor o{out, q.bshd};
    std::vector<double> num(dv);
    for (int64_t i = 0; i < seqQ; ++i) {
      double den = 0;
      std::fill(num.begin(), num.end(), 0.0);
      // The initial state's terms: phi(q_i) S_0 and phi(q_i) . z_0.
      for (int64_t d = 0; d < dk; ++d) {
        size_t row = (size_t(b) * op.getKvHeads() + g) * dk + d;
        if (z0)
          den += pq[i * dk + d] * z0->data[row];
        if (s0)
          for (int64_t e = 0; e < dv; ++e)
            num[e] += pq[i * dk + d] * s0->data[row * dv + e];
      }
      int64_t keys = op.getCausal() ? std::min(i + 1, seqKv) : seqKv;
      for (int64_t j = 0; j < keys; ++j) {
        double a = 0;
        for (int64_t d = 0; d < dk; ++d)
          a += pq[i * dk + d] * pk[j * dk + d];
        den += a;
        for (int64_t e = 0; e < dv; ++e)
          num[e] += a * v.at(b, g, j, e);
      }
      double norm = den + op.getEpsOrDefault();
      for (int64_t e = 0; e < dv; ++e) {
        double x = !op.getNormalize() ? num[e] : norm == 0 ? 0.0 : num[e] / norm;
        out.data[o.index(b, h, i, e)] = roundTo(out.type, x);
      }
    }
  }

  /// S = S_0 + sum_j phi(k_j)^T v_j and z = z_0 + sum_j phi(k_j) of (b, g).
  void finalState(int64_t b, int64_t g, const HostTensor *s0, const HostTensor *z0,
                  LinearResult &r) const {
    std::vector<double> pk = phiRows(k, b, g, seqKv, 1.0);
    for (int64_t d = 0; d < dk; ++d) {
      size_t row = (size_t(b) * op.getKvHeads() + g) * dk + d;
      double z = z0 ? z0->data[row] : 0;
      for (int64_t j = 0; j < seqKv; ++j)
        z += pk[j * dk + d];
      r.finalNorm.data[row] = z;
      for (int64_t e = 0; e < dv; ++e) {
        double s = s0 ? s0->data[row * dv + e] : 0;
        for (int64_t j = 0; j < seqKv; ++j)
          s += pk[j * dk + d] * v.at(b, g, j, e);
        r.finalState.data[row * dv + e] = s;
      }
    }
  }
};

llvm::Error checkState(const HostTensor *t, llvm::ArrayRef<int64_t> shape, const char *name) {
  if (t && llvm::ArrayRef<int64_t>(t->shape) != shape)
    return error(llvm::Twine(name) + " has shape " + t->shapeString() + "; expected " +
                 shapeString(shape));
  return llvm::Error::success();
}

} // namespace

llvm::SmallVector<int64_t, 4> attnc::linearShape(LinearAttentionOp op, int64_t batch,
                                                 int64_t seq, bool query, bool valueRows) {
  int64_t heads = query ? op.getHeads() : op.getKvHeads();
  int64_t dim = valueRows ? op.getValueDimOrDefault() : op.getDim();
  if (op.getLayout() == mlir::attn::Layout::bshd)
    return {batch, seq, heads, dim};
  return {batch, heads, seq, dim};
}

llvm::Expected<LinearResult> attnc::evaluateLinear(LinearAttentionOp op, const HostTensor &q,
                                                   const HostTensor &k, const HostTensor &v,
                                                   const HostTensor *initialState,
                                                   const HostTensor *initialNorm) {
  bool bshd = op.getLayout() == mlir::attn::Layout::bshd;
  int seqDim = bshd ? 1 : 2;
  if (q.shape.size() != 4 || k.shape.size() != 4 || v.shape.size() != 4)
    return error("q, k and v need 4 dimensions");
  int64_t batch = q.shape[0], seqQ = q.shape[seqDim], seqKv = k.shape[seqDim];
  int64_t dk = op.getDim(), dv = op.getValueDimOrDefault(), kvHeads = op.getKvHeads();
  if (op.getCausal() && seqQ != seqKv)
    return error("a causal linear attention has one length: q has " + llvm::Twine(seqQ) +
                 " rows, k " + llvm::Twine(seqKv));
  struct Expect {
    const HostTensor &t;
    llvm::SmallVector<int64_t, 4> shape;
    const char *name;
  } expect[] = {{q, linearShape(op, batch, seqQ, true, false), "q"},
                {k, linearShape(op, batch, seqKv, false, false), "k"},
                {v, linearShape(op, batch, seqKv, false, true), "v"}};
  for (const Expect &e : expect)
    if (llvm::Error err = checkState(&e.t, e.shape, e.name))
      return std::move(err);
  if ((initialState || initialNorm) && !op.getCarryState())
    return error("an initial state is given to a kernel without state = carry");
  if (llvm::Error err = checkState(initialState, {batch, kvHeads, dk, dv}, "initial_state"))
    return std::move(err);
  if (llvm::Error err = checkState(initialNorm, {batch, kvHeads, dk}, "initial_norm"))
    return std::move(err);
  LinearResult r;
  r.out = HostTensor(q.type, linearShape(op, batch, seqQ, true, true));
  r.finalState = HostTensor(ElementType::f32, {batch, kvHeads, dk, dv});
  r.finalNorm = HostTensor(ElementType::f32, {batch, kvHeads, dk});
  HeadEvaluation eval{op, {q, bshd}, {k, bshd}, {v, bshd}, seqQ, seqKv, dk, dv};
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < op.getHeads(); ++h)
      eval.run(b, h, initialState, initialNorm, r.out);
    for (int64_t g = 0; g < kvHeads; ++g)
      eval.finalState(b, g, initialState, initialNorm, r);
  }
  return std::move(r);
}
