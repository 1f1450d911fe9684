//===- Evaluator.cpp - the reference semantics of attn specs --------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The untiled evaluation. For each (b, h, i): scores over every key j in
// double, the mask attribute's rule (MaskRules.h, per element) and mask_mod decide
// which are kept, score_mod runs on kept scores only, then a two-pass
// softmax. A row with nothing kept (or only -inf scores) gives out = 0,
// lse = -inf, weights = 0.
//
//===----------------------------------------------------------------------===//

#include "attnc/Reference/Evaluator.h"

#include "EvalContext.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <limits>
#include <optional>

#include <unistd.h>

using namespace attnc;
using namespace attnc::detail;
using namespace mlir::attn;

llvm::SmallVector<int64_t, 4> attnc::tensorShape(AttentionSpecOpInterface op,
                                                 const ProblemSize &size,
                                                 bool isQuery) {
  int64_t heads = isQuery ? op.getHeads() : op.getKvHeads();
  int64_t seq = isQuery ? size.seqQ : size.seqKv;
  if (op.getLayout() == Layout::bhsd)
    return {size.batch, heads, seq, op.getDim()};
  return {size.batch, seq, heads, op.getDim()};
}

llvm::Error attnc::checkProblemSize(AttentionSpecOpInterface op,
                                    const ProblemSize &size) {
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
  attnc::mask::LengthCover cover = attnc::mask::layoutCover(op.getMask().toMaskRule());
  if (size.seqQ > cover.q || size.seqKv > cover.kv)
    return error("the block layout covers seq_q <= " + llvm::Twine(cover.q) +
                 " and seq_kv <= " + llvm::Twine(cover.kv) + ", got " +
                 llvm::Twine(size.seqQ) + " and " + llvm::Twine(size.seqKv));
  return llvm::Error::success();
}

llvm::Error attnc::checkFitsInMemory(AttentionSpecOpInterface op,
                                     const ProblemSize &size) {
  double qElems = double(size.batch) * op.getHeads() * size.seqQ * op.getDim();
  double kvElems = double(size.batch) * op.getKvHeads() * size.seqKv * op.getDim();
  double bytes = (2 * qElems + 2 * kvElems) * (sizeof(double) + sizeof(float));
  double memory = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
  if (bytes <= memory)
    return llvm::Error::success();
  return error(llvm::formatv("batch {0}, seq_q {1}, seq_kv {2}: q, k, v and out need "
                             "about {3:F1} GiB of host memory; this machine has {4:F1} GiB",
                             size.batch, size.seqQ, size.seqKv, bytes / (1 << 30),
                             memory / (1 << 30))
                   .str());
}

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

class ReferenceRun {
public:
  ReferenceRun(AttentionSpecOpInterface op, const ProblemSize &size,
               const HostTensor &q, const HostTensor &k, const HostTensor &v,
               const ModInputs *inputs)
      : ctx(op, size, q, k, v, inputs) {}

  llvm::Expected<ReferenceResult> run(bool wantWeights);

private:
  llvm::Error scoreRow(int64_t b, int64_t h, int64_t i);
  void writeRow(ReferenceResult &result, int64_t b, int64_t h, int64_t i);
  void writeWeights(ReferenceResult &result, int64_t row, double rowMax,
                    double sum);

  EvalContext ctx;
  // The current row: scores with masked entries at -inf.
  std::vector<double> scores;
};

llvm::Error ReferenceRun::scoreRow(int64_t b, int64_t h, int64_t i) {
  scores.assign(ctx.size.seqKv, kNegInf);
  for (int64_t j = 0; j < ctx.size.seqKv; ++j) {
    llvm::Expected<std::pair<double, double>> s = ctx.keptScore(b, h, i, j);
    if (!s)
      return s.takeError();
    scores[j] = s->first;
  }
  return llvm::Error::success();
}

void ReferenceRun::writeRow(ReferenceResult &result, int64_t b, int64_t h,
                            int64_t i) {
  // A NaN score (a NaN in q, or in a kept key) makes the row NaN, as in the kernels; std::max
  // alone would skip it and, for an all-NaN row, report the row fully masked.
  double rowMax = kNegInf;
  for (double s : scores) {
    if (std::isnan(s)) {
      rowMax = s;
      break;
    }
    rowMax = std::max(rowMax, s);
  }
  double sum = 0;
  std::vector<double> acc(ctx.dim, 0.0);
  for (int64_t j = 0; rowMax != kNegInf && j < ctx.size.seqKv; ++j) {
    if (scores[j] == kNegInf)
      continue;
    ++result.keptPairs;
    double p = std::exp(scores[j] - rowMax);
    sum += p;
    const double *vRow = ctx.valueRow(b, h, j);
    for (int64_t d = 0; d < ctx.dim; ++d)
      acc[d] += p * vRow[d];
  }
  ctx.storeRow(result, b, h, i, rowMax, sum, acc);
  if (!result.weights.empty())
    writeWeights(result, (b * ctx.heads + h) * ctx.size.seqQ + i, rowMax, sum);
}

void ReferenceRun::writeWeights(ReferenceResult &result, int64_t row,
                                double rowMax, double sum) {
  for (int64_t j = 0; j < ctx.size.seqKv; ++j)
    result.weights.data[row * ctx.size.seqKv + j] =
        sum == 0 ? 0.0
                 : roundTo(ElementType::f32, std::exp(scores[j] - rowMax) / sum);
}

llvm::Expected<ReferenceResult> ReferenceRun::run(bool wantWeights) {
  ReferenceResult result = ctx.allocateOutputs(wantWeights);
  for (int64_t b = 0; b < ctx.size.batch; ++b)
    for (int64_t h = 0; h < ctx.heads; ++h)
      for (int64_t i = 0; i < ctx.size.seqQ; ++i) {
        if (llvm::Error err = scoreRow(b, h, i))
          return std::move(err);
        writeRow(result, b, h, i);
      }
  return result;
}

} // namespace

llvm::Expected<ReferenceResult>
attnc::evaluateReference(AttentionSpecOpInterface op, const HostTensor &q,
                         const HostTensor &k, const HostTensor &v,
                         bool wantWeights, int64_t firstBatch, const ModInputs *inputs,
                         const ProblemSize *inputsSize) {
  llvm::Expected<ProblemSize> size = inferSize(op, q, k, v);
  if (!size)
    return size.takeError();
  size->firstBatch = firstBatch;
  if (llvm::Error err = checkModInputs(op, inputsSize ? *inputsSize : *size,
                                       inputs ? *inputs : ModInputs()))
    return std::move(err);
  return ReferenceRun(op, *size, q, k, v, inputs).run(wantWeights);
}
