//===- FlashEvaluator.cpp - attn.flash evaluated tile by tile -------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The recurrence of attn.flash's description, executed literally and in
// double: for every (b, h, query tile), KV tiles in order, each classified by
// the mask's tile rule (classifyTile, the same rule the kernels emit). Empty
// tiles are never computed; full tiles skip the mask and mask_mod; partial
// tiles evaluate both per element. score_mod runs on every computed score,
// masked or not, as a kernel does. Per row, a running max m, sum l and
// accumulator acc are rescaled by exp(m - m') whenever the max grows.
//
// Nothing here is shared with the untiled loop order, only the per-pair facts
// (EvalContext), so agreement with evaluateReference is evidence that tiling,
// tile classification and the online softmax are right.
//
//===----------------------------------------------------------------------===//

#include "attnc/Reference/Evaluator.h"

#include "EvalContext.h"

#include <cmath>
#include <limits>

using namespace attnc;
using namespace attnc::detail;
using namespace mlir::attn;
using attnc::mask::TileBounds;
using attnc::mask::TileClass;

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

class FlashRun {
public:
  FlashRun(FlashOp op, const ProblemSize &size, const HostTensor &q,
           const HostTensor &k, const HostTensor &v, const ModInputs *inputs)
      : ctx(op, size, q, k, v, inputs),
        hasMaskMod(!op.getMaskMod().empty()), blockQ(op.getTileQ()),
        blockKv(op.getTileKv()) {}

  llvm::Expected<ReferenceResult> run();

private:
  llvm::Error queryTile(int64_t b, int64_t h, int64_t q0);
  llvm::Error scoreTile(int64_t b, int64_t h, const TileBounds<int64_t> &t,
                        bool partial);
  void updateRow(int64_t b, int64_t h, int64_t r, const TileBounds<int64_t> &t);
  void count(TileClass c);

  EvalContext ctx;
  bool hasMaskMod;
  int64_t blockQ, blockKv;
  ReferenceResult result;
  // The current query tile: per row m, l and acc (rows x head_dim), and the
  // scores of the current KV tile (rows x keys, masked ones at -inf).
  std::vector<double> m, l, acc, scores;
};

void FlashRun::count(TileClass c) {
  switch (c) {
  case TileClass::full:
    ++result.tiles.full;
    break;
  case TileClass::partial:
    ++result.tiles.partial;
    break;
  case TileClass::empty:
    ++result.tiles.empty;
    break;
  }
}

llvm::Error FlashRun::scoreTile(int64_t b, int64_t h,
                                const TileBounds<int64_t> &t, bool partial) {
  int64_t cols = t.k1 - t.k0;
  scores.resize((t.q1 - t.q0) * cols);
  for (int64_t i = t.q0; i < t.q1; ++i)
    for (int64_t j = t.k0; j < t.k1; ++j) {
      llvm::Expected<double> s = ctx.score(b, h, i, j);
      if (!s)
        return s.takeError();
      double &slot = scores[(i - t.q0) * cols + (j - t.k0)];
      slot = *s;
      if (!partial)
        continue;
      llvm::Expected<bool> kept = ctx.keeps(b, h, i, j);
      if (!kept)
        return kept.takeError();
      if (!*kept)
        slot = kNegInf;
    }
  return llvm::Error::success();
}

void FlashRun::updateRow(int64_t b, int64_t h, int64_t r,
                         const TileBounds<int64_t> &t) {
  int64_t cols = t.k1 - t.k0;
  const double *s = &scores[r * cols];
  double mNew = m[r];
  for (int64_t j = 0; j < cols; ++j)
    mNew = std::max(mNew, s[j]);
  // A row with nothing kept yet keeps l = acc = 0; shifting by 0 instead of
  // -inf avoids exp(-inf - -inf) = NaN.
  double shift = mNew == kNegInf ? 0.0 : mNew;
  double rescale = std::exp(m[r] - shift);
  double *a = &acc[r * ctx.dim];
  l[r] *= rescale;
  for (int64_t d = 0; d < ctx.dim; ++d)
    a[d] *= rescale;
  for (int64_t j = 0; j < cols; ++j) {
    if (s[j] == kNegInf)
      continue;
    ++result.keptPairs;
    double p = std::exp(s[j] - shift);
    l[r] += p;
    const double *vRow = ctx.valueRow(b, h, t.k0 + j);
    for (int64_t d = 0; d < ctx.dim; ++d)
      a[d] += p * vRow[d];
  }
  m[r] = mNew;
}

llvm::Error FlashRun::queryTile(int64_t b, int64_t h, int64_t q0) {
  const ProblemSize &size = ctx.size;
  int64_t q1 = std::min(size.seqQ, q0 + blockQ), rows = q1 - q0;
  m.assign(rows, kNegInf);
  l.assign(rows, 0.0);
  acc.assign(rows * ctx.dim, 0.0);
  for (int64_t k0 = 0; k0 < size.seqKv; k0 += blockKv) {
    TileBounds<int64_t> t{q0, q1, k0, std::min(size.seqKv, k0 + blockKv),
                          size.seqQ, size.seqKv};
    TileClass c = attnc::mask::classifyTile(ctx.maskRule(), hasMaskMod, t);
    count(c);
    if (c == TileClass::empty)
      continue;
    if (llvm::Error err = scoreTile(b, h, t, c == TileClass::partial))
      return err;
    for (int64_t r = 0; r < rows; ++r)
      updateRow(b, h, r, t);
  }
  for (int64_t r = 0; r < rows; ++r)
    ctx.storeRow(result, b, h, q0 + r, m[r], l[r],
                 llvm::ArrayRef(&acc[r * ctx.dim], ctx.dim));
  return llvm::Error::success();
}

llvm::Expected<ReferenceResult> FlashRun::run() {
  result = ctx.allocateOutputs(/*wantWeights=*/false);
  for (int64_t b = 0; b < ctx.size.batch; ++b)
    for (int64_t h = 0; h < ctx.heads; ++h)
      for (int64_t q0 = 0; q0 < ctx.size.seqQ; q0 += blockQ)
        if (llvm::Error err = queryTile(b, h, q0))
          return std::move(err);
  return std::move(result);
}

} // namespace

llvm::Expected<ReferenceResult> attnc::evaluateFlash(FlashOp op,
                                                     const HostTensor &q,
                                                     const HostTensor &k,
                                                     const HostTensor &v,
                                                     const ModInputs *inputs) {
  llvm::Expected<ProblemSize> size = inferSize(op, q, k, v);
  if (!size)
    return size.takeError();
  if (llvm::Error err = checkModInputs(op, *size, inputs ? *inputs : ModInputs()))
    return std::move(err);
  return FlashRun(op, *size, q, k, v, inputs).run();
}
