//===- Evaluator.cpp - the reference semantics of attn specs --------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// For each (b, h, i): scores over every key j in double, the mask attribute
// (MaskAttrInterface::isKept) and mask_mod decide which are kept, score_mod
// runs on kept scores only, then a two-pass softmax. A row with nothing kept
// (or only -inf scores) gives out = 0, lse = -inf, weights = 0.
//
//===----------------------------------------------------------------------===//

#include "attnc/Reference/Evaluator.h"

#include "attnc/Reference/ModInterpreter.h"

#include <cmath>
#include <limits>
#include <optional>

using namespace attnc;
using namespace mlir::attn;

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::SmallVector<int64_t, 4> attnc::tensorShape(AttentionOp op,
                                                 const ProblemSize &size,
                                                 bool isQuery) {
  int64_t heads = isQuery ? op.getHeads() : op.getKvHeads();
  int64_t seq = isQuery ? size.seqQ : size.seqKv;
  if (op.getLayout() == Layout::bhsd)
    return {size.batch, heads, seq, op.getDim()};
  return {size.batch, seq, heads, op.getDim()};
}

llvm::Error attnc::checkProblemSize(AttentionOp op, const ProblemSize &size) {
  if (size.batch <= 0 || size.seqQ <= 0 || size.seqKv <= 0)
    return error("batch, seq_q and seq_kv must be positive, got batch " +
                 llvm::Twine(size.batch) + ", seq_q " + llvm::Twine(size.seqQ) +
                 ", seq_kv " + llvm::Twine(size.seqKv));
  if (std::optional<llvm::ArrayRef<int64_t>> maxSeq = op.getMaxSeq())
    if (size.seqQ > (*maxSeq)[0] || size.seqKv > (*maxSeq)[1])
      return error("seq_q " + llvm::Twine(size.seqQ) + " / seq_kv " +
                   llvm::Twine(size.seqKv) + " exceed the spec's max_seq [" +
                   llvm::Twine((*maxSeq)[0]) + ", " + llvm::Twine((*maxSeq)[1]) +
                   "]");
  if (auto blocks = llvm::dyn_cast<BlockSparseMaskAttr>(op.getMask())) {
    int64_t coverQ = blocks.getNumQBlocks() * blocks.getBlockQ();
    int64_t coverKv = blocks.getNumKvBlocks() * blocks.getBlockKv();
    if (size.seqQ > coverQ || size.seqKv > coverKv)
      return error("the block layout covers seq_q <= " + llvm::Twine(coverQ) +
                   " and seq_kv <= " + llvm::Twine(coverKv) + ", got " +
                   llvm::Twine(size.seqQ) + " and " + llvm::Twine(size.seqKv));
  }
  return llvm::Error::success();
}

namespace {

/// Row-major offset of (b, h, s, 0) in a 4-d tensor of the given layout.
struct LayoutIndexer {
  Layout layout;
  int64_t heads, seq, dim;
  int64_t operator()(int64_t b, int64_t h, int64_t s) const {
    if (layout == Layout::bhsd)
      return ((b * heads + h) * seq + s) * dim;
    return ((b * seq + s) * heads + h) * dim;
  }
};

class ReferenceRun {
public:
  ReferenceRun(AttentionOp op, const ProblemSize &size, const HostTensor &q,
               const HostTensor &k, const HostTensor &v)
      : op(op), size(size), q(q), k(k), v(v), mask(op.getMask()),
        qIndex{op.getLayout(), op.getHeads(), size.seqQ, op.getDim()},
        kvIndex{op.getLayout(), op.getKvHeads(), size.seqKv, op.getDim()} {
    if (!op.getScoreMod().empty())
      scoreMod.emplace(op.getScoreMod());
    if (!op.getMaskMod().empty())
      maskMod.emplace(op.getMaskMod());
    scale = op.getScaleAttr() ? op.getScaleAttr().getValueAsDouble()
                              : 1.0 / std::sqrt(double(op.getDim()));
  }

  llvm::Expected<ReferenceResult> run(bool wantWeights);

private:
  llvm::Error scoreRow(int64_t b, int64_t h, int64_t i);
  llvm::Expected<bool> keeps(int64_t b, int64_t h, int64_t i, int64_t j);
  void writeRow(ReferenceResult &result, int64_t b, int64_t h, int64_t i);

  AttentionOp op;
  ProblemSize size;
  const HostTensor &q, &k, &v;
  MaskAttrInterface mask;
  LayoutIndexer qIndex, kvIndex;
  std::optional<ModInterpreter> scoreMod, maskMod;
  double scale;
  // The current row: scores with masked entries at -inf.
  std::vector<double> scores;
};

llvm::Expected<bool> ReferenceRun::keeps(int64_t b, int64_t h, int64_t i,
                                         int64_t j) {
  if (!mask.isKept(i, j, size.seqQ, size.seqKv))
    return false;
  if (!maskMod)
    return true;
  llvm::Expected<Scalar> keep =
      maskMod->run({Scalar::ofIndex(b), Scalar::ofIndex(h), Scalar::ofIndex(i),
                    Scalar::ofIndex(j)});
  if (!keep)
    return keep.takeError();
  return keep->i.isOne();
}

llvm::Error ReferenceRun::scoreRow(int64_t b, int64_t h, int64_t i) {
  int64_t dim = op.getDim();
  int64_t g = h / (op.getHeads() / op.getKvHeads());
  const double *qRow = &q.data[qIndex(b, h, i)];
  scores.assign(size.seqKv, -std::numeric_limits<double>::infinity());
  for (int64_t j = 0; j < size.seqKv; ++j) {
    llvm::Expected<bool> kept = keeps(b, h, i, j);
    if (!kept)
      return kept.takeError();
    if (!*kept)
      continue;
    const double *kRow = &k.data[kvIndex(b, g, j)];
    double dot = 0;
    for (int64_t d = 0; d < dim; ++d)
      dot += qRow[d] * kRow[d];
    double s = scale * dot;
    if (scoreMod) {
      llvm::Expected<Scalar> modded = scoreMod->run(
          {Scalar::ofFloat(s), Scalar::ofIndex(b), Scalar::ofIndex(h),
           Scalar::ofIndex(i), Scalar::ofIndex(j)});
      if (!modded)
        return modded.takeError();
      s = modded->f;
    }
    scores[j] = s;
  }
  return llvm::Error::success();
}

void ReferenceRun::writeRow(ReferenceResult &result, int64_t b, int64_t h,
                            int64_t i) {
  int64_t dim = op.getDim(), heads = op.getHeads();
  int64_t g = h / (heads / op.getKvHeads());
  double rowMax = -std::numeric_limits<double>::infinity();
  for (double s : scores)
    rowMax = std::max(rowMax, s);
  bool empty = rowMax == -std::numeric_limits<double>::infinity();
  double sum = 0;
  std::vector<double> acc(dim, 0.0);
  for (int64_t j = 0; !empty && j < size.seqKv; ++j) {
    if (scores[j] == -std::numeric_limits<double>::infinity())
      continue;
    ++result.keptPairs;
    double p = std::exp(scores[j] - rowMax);
    sum += p;
    const double *vRow = &v.data[kvIndex(b, g, j)];
    for (int64_t d = 0; d < dim; ++d)
      acc[d] += p * vRow[d];
  }
  int64_t row = (b * heads + h) * size.seqQ + i;
  if (!result.out.empty()) {
    double *outRow = &result.out.data[qIndex(b, h, i)];
    for (int64_t d = 0; d < dim; ++d)
      outRow[d] = empty ? 0.0 : roundTo(result.out.type, acc[d] / sum);
  }
  if (!result.lse.empty())
    result.lse.data[row] = empty ? -std::numeric_limits<double>::infinity()
                                 : roundTo(ElementType::f32, rowMax + std::log(sum));
  if (!result.weights.empty())
    for (int64_t j = 0; j < size.seqKv; ++j)
      result.weights.data[row * size.seqKv + j] =
          empty ? 0.0
                : roundTo(ElementType::f32, std::exp(scores[j] - rowMax) / sum);
}

llvm::Expected<ReferenceResult> ReferenceRun::run(bool wantWeights) {
  ReferenceResult result;
  int64_t heads = op.getHeads();
  if (op.hasOutput(OutputKind::out))
    result.out = HostTensor(q.type, q.shape);
  if (op.hasOutput(OutputKind::lse))
    result.lse = HostTensor(ElementType::f32, {size.batch, heads, size.seqQ});
  if (wantWeights || op.hasOutput(OutputKind::weights))
    result.weights = HostTensor(ElementType::f32,
                                {size.batch, heads, size.seqQ, size.seqKv});
  for (int64_t b = 0; b < size.batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < size.seqQ; ++i) {
        if (llvm::Error err = scoreRow(b, h, i))
          return std::move(err);
        writeRow(result, b, h, i);
      }
  return result;
}

/// Infers the problem size from q and k, then checks all three shapes.
llvm::Expected<ProblemSize> inferSize(AttentionOp op, const HostTensor &q,
                                      const HostTensor &k, const HostTensor &v) {
  if (q.shape.size() != 4 || k.shape.size() != 4)
    return error("q and k must be 4-d, got q " + q.shapeString() + " and k " +
                 k.shapeString());
  bool bhsd = op.getLayout() == Layout::bhsd;
  ProblemSize size{q.shape[0], q.shape[bhsd ? 2 : 1], k.shape[bhsd ? 2 : 1]};
  if (llvm::Error err = checkProblemSize(op, size))
    return std::move(err);
  struct Named {
    const char *name;
    const HostTensor &tensor;
    bool isQuery;
  };
  for (const Named &t : {Named{"q", q, true}, Named{"k", k, false},
                         Named{"v", v, false}}) {
    llvm::SmallVector<int64_t, 4> expected = tensorShape(op, size, t.isQuery);
    if (t.tensor.shape != expected)
      return error(llvm::Twine(t.name) + " has shape " + t.tensor.shapeString() +
                   " but the spec (" + stringifyLayout(op.getLayout()) +
                   ") needs " + shapeString(expected));
  }
  return size;
}

} // namespace

llvm::Expected<ReferenceResult>
attnc::evaluateReference(AttentionOp op, const HostTensor &q,
                         const HostTensor &k, const HostTensor &v,
                         bool wantWeights) {
  llvm::Expected<ProblemSize> size = inferSize(op, q, k, v);
  if (!size)
    return size.takeError();
  return ReferenceRun(op, *size, q, k, v).run(wantWeights);
}
