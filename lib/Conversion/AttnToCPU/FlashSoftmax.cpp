//===- FlashSoftmax.cpp - the online softmax of a KV tile -------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// m' = max(m, rowmax S), P = exp(S - m'), l and the rescale factor, over
// vectors of query rows (the lanes of S^T).
//
//===----------------------------------------------------------------------===//

#include "FlashKernelBuilder.h"

#include "attnc/Conversion/AttnToCPU/ExpNonPositive.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <utility>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

/// A plain max, select(x > y, x, y): x86's vmaxps, one instruction, where
/// the NaN-propagating arith.maximumf takes six. A NaN score makes the row NaN
/// through its weight (emitExp2NonPositive keeps NaN), whatever this returns.
Value FlashKernelBuilder::plainMax(OpBuilder &nb, Location loc, Value x, Value y) {
  return arith::SelectOp::create(
      nb, loc, arith::CmpFOp::create(nb, loc, arith::CmpFPredicate::OGT, x, y), x, y);
}

/// Folds `step(nb, loc, j, acc)` over the keys of a tile with kSoftmaxChains
/// independent accumulators (j, j + 1, ... in turn), so a chain of dependent
/// max / add latencies does not serialize the loop; returns the chains.
template <typename Step>
SmallVector<Value> FlashKernelBuilder::foldKeys(Value init, Step step) {
  SmallVector<Value> inits(kSoftmaxChains, init);
  auto fold = scf::ForOp::create(
      b, idx(0), idx(blockKv), idx(kSoftmaxChains), inits,
      [&](OpBuilder &nb, Location loc, Value j, ValueRange acc) {
        SmallVector<Value> next;
        for (int64_t u = 0; u < kSoftmaxChains; ++u)
          next.push_back(
              step(nb, loc,
                   arith::AddIOp::create(nb, loc, j, arith::ConstantIndexOp::create(nb, loc, u)),
                   acc[u]));
        scf::YieldOp::create(nb, loc, next);
      });
  return SmallVector<Value>(fold.getResults());
}

/// Per vector of rows: m' = max(m, max_j S^T[j, :]); P^T = exp(S^T - m') in
/// place; l = l e^(m - m') + sum_j P^T; the factor e^(m - m') is kept in
/// ALPHA for the accumulator. Lanes with nothing kept so far (m' = -inf) use 0
/// as their shift, so their P is exp(-inf) = 0, never NaN. Every exponent is
/// <= 0, which emitExp2NonPositive relies on. In the bf16 dot kernel P goes
/// to PB in bf16 pairs instead of back to S^T. With base-2 scores, m, S and
/// the shifts are in units of log2(e) and every exp is a 2^x.
void FlashKernelBuilder::onlineSoftmax() {
  int64_t w = cfg.vectorWidth;
  Location loc = b.getLoc();
  Value negInfVec = vector::BroadcastOp::create(b, vecType(), negInf());
  Value zeros = zeroVector(b, loc);
  // exp(x) as 2^(x log2 e) unless the scores are base 2 already; P in the bf16
  // dot kernel is rounded to bf16 next, so a cheaper polynomial does there.
  Value log2e = vector::BroadcastOp::create(b, vecType(), f32(1.44269504088896341f));
  auto expOf = [&](OpBuilder &nb, Location l, Value x, ExpAccuracy accuracy) {
    if (!base2Scores)
      x = arith::MulFOp::create(nb, l, x, log2e);
    return emitExp2NonPositive(nb, l, x, accuracy, cfg.avx512Scalef);
  };
  ExpAccuracy pAccuracy = dot ? ExpAccuracy::bf16 : ExpAccuracy::f32;
  // S^T holds q k unscaled when the scale is applied here (scaleInSoftmax):
  // the max scales with it (scale > 0), and s * scale - m' is one FMA.
  Value scale =
      scaleInSoftmax ? vector::BroadcastOp::create(b, vecType(), f32(queryScale())) : Value();
  loop(0, blockQ, w, [&](Value i) {
    SmallVector<Value> maxes = foldKeys(negInfVec, [&](OpBuilder &nb, Location l, Value j,
                                                       Value acc) {
      return plainMax(nb, l, acc, vector::LoadOp::create(nb, l, vecType(), ST, ValueRange{j, i}));
    });
    Value rowMax = maxes.front();
    for (Value m : ArrayRef(maxes).drop_front())
      rowMax = plainMax(b, loc, rowMax, m);
    if (scale)
      rowMax = arith::MulFOp::create(b, rowMax, scale);
    Value mOld = vector::LoadOp::create(b, vecType(), M, ValueRange{i});
    Value mNew = plainMax(b, loc, mOld, rowMax);
    Value dead = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, mNew, negInfVec);
    Value shift = arith::SelectOp::create(b, dead, zeros, mNew);
    Value negShift = arith::NegFOp::create(b, shift);
    Value alpha = expOf(b, loc, arith::SubFOp::create(b, mOld, shift), ExpAccuracy::f32);
    Value evenP; // dot: P of the even key of the pair being packed
    SmallVector<Value> sums = foldKeys(zeros, [&](OpBuilder &nb, Location l, Value j, Value acc) {
      Value s = vector::LoadOp::create(nb, l, vecType(), ST, ValueRange{j, i});
      Value x = scale ? Value(math::FmaOp::create(nb, l, s, scale, negShift))
                      : Value(arith::SubFOp::create(nb, l, s, shift));
      Value p = expOf(nb, l, x, pAccuracy);
      if (!dot)
        vector::StoreOp::create(nb, l, p, ST, ValueRange{j, i});
      else if (!evenP)
        evenP = p;
      else // keys j - 1, j: straight into PB, P^T never stored
        storeProbabilityPair(nb, l, j, i, std::exchange(evenP, Value()), p);
      return arith::AddFOp::create(nb, l, acc, p).getResult();
    });
    Value sum = sums.front();
    for (Value x : ArrayRef(sums).drop_front())
      sum = arith::AddFOp::create(b, sum, x);
    Value lOld = vector::LoadOp::create(b, vecType(), L, ValueRange{i});
    vector::StoreOp::create(b, math::FmaOp::create(b, lOld, alpha, sum), L, ValueRange{i});
    vector::StoreOp::create(b, mNew, M, ValueRange{i});
    vector::StoreOp::create(b, alpha, ALPHA, ValueRange{i});
  });
}
