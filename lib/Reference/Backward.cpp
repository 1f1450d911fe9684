//===- Backward.cpp - the reference gradients of attention ----------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Row by row, as evaluateReference: the kept scores and their slopes, the
// softmax, out, then the row's share of dq, dk and dv (Backward.h).
//
//===----------------------------------------------------------------------===//

#include "attnc/Reference/Backward.h"

#include "EvalContext.h"

#include <cmath>
#include <limits>

using namespace attnc;
using namespace attnc::detail;
using namespace mlir::attn;

namespace {

class BackwardRun {
public:
  BackwardRun(AttentionSpecOpInterface op, const ProblemSize &size, const HostTensor &q,
              const HostTensor &k, const HostTensor &v, const HostTensor &dOut,
              const ModInputs *inputs, const HostTensor *dLse)
      : ctx(op, size, q, k, v, inputs), q(q), k(k), v(v), dOut(dOut), dLse(dLse) {
    ctx.setExact();
    result.dq = HostTensor(q.type, q.shape);
    result.dk = HostTensor(k.type, k.shape);
    result.dv = HostTensor(v.type, v.shape);
    result.out = HostTensor(q.type, q.shape);
    result.lse = HostTensor(ElementType::f32, {size.batch, ctx.heads, size.seqQ});
    if (inputs)
      for (const auto &input : *inputs)
        if (input.second.type == ElementType::f32)
          result.dInputs[input.first()] = HostTensor(ElementType::f32, input.second.shape);
  }

  llvm::Expected<BackwardResult> run() {
    for (int64_t b = 0; b < ctx.size.batch; ++b)
      for (int64_t h = 0; h < ctx.heads; ++h)
        for (int64_t i = 0; i < ctx.size.seqQ; ++i)
          if (llvm::Error err = row(b, h, i))
            return std::move(err);
    return std::move(result);
  }

private:
  llvm::Error softmaxRow(int64_t b, int64_t h, int64_t i);
  llvm::Error row(int64_t b, int64_t h, int64_t i);

  EvalContext ctx;
  const HostTensor &q, &k, &v, &dOut;
  const HostTensor *dLse;
  BackwardResult result;
  // The current row: the kept keys, their P and d score / d (scale q.k).
  std::vector<int64_t> kept;
  std::vector<double> p, slope;
};

/// kept, p and slope of row (b, h, i); p stays empty if nothing is kept.
llvm::Error BackwardRun::softmaxRow(int64_t b, int64_t h, int64_t i) {
  kept.clear();
  p.clear();
  slope.clear();
  std::vector<double> scores;
  double max = -std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < ctx.size.seqKv; ++j) {
    llvm::Expected<std::pair<double, double>> s = ctx.keptScore(b, h, i, j);
    if (!s)
      return s.takeError();
    if (s->first == -std::numeric_limits<double>::infinity())
      continue; // masked, or a score_mod's -inf, which masks as the mask does
    kept.push_back(j);
    scores.push_back(s->first);
    slope.push_back(s->second);
    max = std::max(max, s->first);
  }
  double sum = 0;
  for (double s : scores)
    sum += std::exp(s - max);
  for (double s : scores)
    p.push_back(std::exp(s - max) / sum);
  result.lse.data[(b * ctx.heads + h) * ctx.size.seqQ + i] = max + std::log(sum);
  result.keptPairs += int64_t(kept.size());
  return llvm::Error::success();
}

llvm::Error BackwardRun::row(int64_t b, int64_t h, int64_t i) {
  if (llvm::Error err = softmaxRow(b, h, i))
    return err;
  int64_t dim = ctx.dim, at = ctx.queryRow(b, h, i);
  const double *dO = &dOut.data[at], *qRow = &q.data[at];
  double *out = &result.out.data[at], *dq = &result.dq.data[at];
  for (auto [j, pj] : llvm::zip(kept, p)) {
    const double *vRow = &v.data[ctx.keyRow(b, h, j)];
    for (int64_t d = 0; d < dim; ++d)
      out[d] += pj * vRow[d];
  }
  double delta = 0; // D = dO . out - dlse
  for (int64_t d = 0; d < dim; ++d)
    delta += dO[d] * out[d];
  if (dLse)
    delta -= dLse->data[(b * ctx.heads + h) * ctx.size.seqQ + i];
  double scale = ctx.scoreScale();
  for (auto [n, j] : llvm::enumerate(kept)) {
    int64_t kvAt = ctx.keyRow(b, h, j);
    const double *kRow = &k.data[kvAt], *vRow = &v.data[kvAt];
    double dP = 0;
    for (int64_t d = 0; d < dim; ++d)
      dP += dO[d] * vRow[d];
    double g = p[n] * (dP - delta), dt = g * slope[n];
    if (llvm::Error err = ctx.inputSlopes(b, h, i, j, [&](llvm::StringRef name, int64_t at,
                                                         double d) {
          result.dInputs[name].data[at] += g * d;
        }))
      return err;
    double *dk = &result.dk.data[kvAt], *dv = &result.dv.data[kvAt];
    for (int64_t d = 0; d < dim; ++d) {
      dq[d] += scale * dt * kRow[d];
      dk[d] += scale * dt * qRow[d];
      dv[d] += p[n] * dO[d];
    }
  }
  return llvm::Error::success();
}

} // namespace

llvm::Expected<BackwardResult> attnc::evaluateBackward(AttentionSpecOpInterface op,
                                                       const HostTensor &q, const HostTensor &k,
                                                       const HostTensor &v,
                                                       const HostTensor &dOut,
                                                       const ModInputs *inputs,
                                                       const HostTensor *dLse) {
  if (op.getVarlen() || op.getPageSize())
    return error("the reference backward takes dense batches: a spec with varlen or "
                 "kv_cache has none yet");
  if (op.getAdditiveAttr())
    return error("the reference backward takes dot-product scores: additive ones have no "
                 "gradient yet");
  llvm::Expected<ProblemSize> size = inferSize(op, q, k, v);
  if (!size)
    return size.takeError();
  if (dOut.shape != q.shape)
    return error("d_out must have out's shape " + q.shapeString() + ", got " +
                 dOut.shapeString());
  if (llvm::Error err = checkModInputs(op, *size, inputs ? *inputs : ModInputs()))
    return std::move(err);
  llvm::SmallVector<int64_t, 3> lseShape = {size->batch, op.getHeads(), size->seqQ};
  if (dLse && dLse->shape != lseShape)
    return error("d_lse must have lse's shape " + shapeString(lseShape) + ", got " +
                 dLse->shapeString());
  return BackwardRun(op, *size, q, k, v, dOut, inputs, dLse).run();
}
