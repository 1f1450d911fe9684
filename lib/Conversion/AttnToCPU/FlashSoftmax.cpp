//===- FlashSoftmax.cpp - the online softmax of a KV tile -------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// m' = max(m, rowmax S), P = exp(S - m'), l and the rescale factor, over
// vectors of query rows (the lanes of S^T); and the fused softmax of full
// tiles, P = exp(S - m) in the Q K^T register blocks (below).
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
SmallVector<Value> FlashKernelBuilder::foldKeys(Value lo, Value hi, Value init, Step step) {
  SmallVector<Value> inits(kSoftmaxChains, init);
  auto fold = scf::ForOp::create(
      b, lo, hi, idx(kSoftmaxChains), inits,
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

/// Per vector of rows in [rowLo, rowHi), over its keys (vectorKeys: the
/// tile's hull, FlashMask.cpp; the rows outside keep m, l and acc as they
/// are): m' = max(m, max_j S^T[j, :]); P^T = exp(S^T - m') in
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
  loop(rowLo, rowHi, w, [&](Value i) {
    auto [lo, hi] = vectorKeys(i);
    SmallVector<Value> maxes = foldKeys(lo, hi, negInfVec, [&](OpBuilder &nb, Location l, Value j,
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
    SmallVector<Value> sums = foldKeys(lo, hi, zeros, [&](OpBuilder &nb, Location l, Value j,
                                                          Value acc) {
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

// The fused softmax. The pass above reads each tile's scores twice after
// Q K^T stored them (max, then exp and sum) and rescales l and the
// accumulators by 2^(m - m') every tile. On a full tile after the first
// visited one, the row's max rarely moves far: there P^T = 2^(S^T - m) is
// taken against the running max m as it stands, in the Q K^T register block
// that just computed the scores (no store and reload of S^T, and the exp
// instructions overlap the next block's FMAs), and m, l's scale and the
// accumulators stay as they are. P may exceed 1 then; the tile stands while
// its row sums stay <= kFusedSumLimit (so every P does), which f32 sums carry
// without loss. A tile whose scores rise further above m (or a row with no max
// yet) is recomputed with the pass, so the result never depends on that bound.
// FlashAttention-4 rescales conditionally in the same spirit on GPUs.

/// Scores and the fused softmax of a full tile into ST (P^T) and TSUM;
/// returns whether the tile stands (acceptFusedTile).
Value FlashKernelBuilder::fusedScores(Value k0, Value cols) {
  Value zeros = zeroVector(b, b.getLoc());
  loop(0, blockQ, cfg.vectorWidth,
       [&](Value i) { vector::StoreOp::create(b, zeros, TSUM, ValueRange{i}); });
  computeScores(k0, cols, /*fused=*/true);
  return acceptFusedTile();
}

/// One Q K^T register block's sums (keyRows x rowCols vectors of rows, in
/// the order scoreBlocks accumulates them): P^T = 2^(S^T - m) into ST, the
/// rows' sums added to TSUM. The exponent is capped at 64 where 2^n is built
/// from exponent bits (which wrap past 127; vscalefps gives inf there): a
/// capped P is 2^64, far over the sum limit, so its tile is refused, as is one
/// with a NaN score.
void FlashKernelBuilder::fusedSoftmaxBlock(ArrayRef<Value> keyRows, ArrayRef<Value> rowCols,
                                           ValueRange sums) {
  Location loc = b.getLoc();
  Value cap = vector::BroadcastOp::create(b, vecType(), f32(64));
  for (auto [c, col] : llvm::enumerate(rowCols)) {
    Value m = vector::LoadOp::create(b, vecType(), M, ValueRange{col});
    Value rowSum = vector::LoadOp::create(b, vecType(), TSUM, ValueRange{col});
    for (auto [r, key] : llvm::enumerate(keyRows)) {
      Value x = arith::SubFOp::create(b, sums[r * rowCols.size() + c], m);
      if (!cfg.avx512Scalef) // select(x < cap, x, cap): one vminps; NaN becomes the cap
        x = arith::SelectOp::create(
            b, arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, x, cap), x, cap);
      Value p = emitExp2NonPositive(b, loc, x, ExpAccuracy::f32, cfg.avx512Scalef);
      vector::StoreOp::create(b, p, ST, ValueRange{key, col});
      rowSum = arith::AddFOp::create(b, rowSum, p);
    }
    vector::StoreOp::create(b, rowSum, TSUM, ValueRange{col});
  }
}

/// The fused tile stands if every row has a max (m > -inf: otherwise s - m
/// is +inf or NaN) and a row sum <= kFusedSumLimit (a NaN sum, from a NaN
/// score, fails too and takes the pass, which makes the row NaN); then
/// l += TSUM and ALPHA = 1 (m unchanged).
Value FlashKernelBuilder::acceptFusedTile() {
  int64_t w = cfg.vectorWidth;
  Value limit = vector::BroadcastOp::create(b, vecType(), f32(kFusedSumLimit));
  Value negInfVec = vector::BroadcastOp::create(b, vecType(), negInf());
  Value allTrue = arith::ConstantOp::create(
      b, DenseElementsAttr::get(VectorType::get({w}, b.getI1Type()), true));
  auto rowsOk = scf::ForOp::create(
      b, rowLo, rowHi, idx(w), ValueRange{allTrue},
      [&](OpBuilder &nb, Location loc, Value i, ValueRange acc) {
        Value m = vector::LoadOp::create(nb, loc, vecType(), M, ValueRange{i});
        Value sum = vector::LoadOp::create(nb, loc, vecType(), TSUM, ValueRange{i});
        Value ok = arith::AndIOp::create(
            nb, loc, arith::CmpFOp::create(nb, loc, arith::CmpFPredicate::OGT, m, negInfVec),
            arith::CmpFOp::create(nb, loc, arith::CmpFPredicate::OLE, sum, limit));
        scf::YieldOp::create(nb, loc, arith::AndIOp::create(nb, loc, acc[0], ok).getResult());
      });
  Value stands = vector::ReductionOp::create(b, vector::CombiningKind::AND, rowsOk.getResult(0));
  ifThen(stands, [&] {
    Value ones = vector::BroadcastOp::create(b, vecType(), f32(1));
    loop(rowLo, rowHi, w, [&](Value i) {
      Value l = vector::LoadOp::create(b, vecType(), L, ValueRange{i});
      Value sum = vector::LoadOp::create(b, vecType(), TSUM, ValueRange{i});
      vector::StoreOp::create(b, arith::AddFOp::create(b, l, sum), L, ValueRange{i});
      vector::StoreOp::create(b, ones, ALPHA, ValueRange{i});
    });
  });
  return stands;
}
