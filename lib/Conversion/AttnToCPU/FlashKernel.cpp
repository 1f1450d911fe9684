//===- FlashKernel.cpp - attn.flash to an x86-64 tile function -----------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The loops that carry out attn.flash's recurrence (documented on the op) on
// x86-64 SIMD. The tile function computes rows [q0, q0 + rows) of one
// (batch, head). Query rows run along the vector lanes, so the softmax of a
// whole vector of rows is a handful of vector ops:
//
//   Q^T = scale * q[rows]^T                   (Dp x blockQ, zero padded; once)
//   for each KV tile [k0, k0 + cols) within the mask's key range:
//     classify the tile (TileClassifier); empty tiles are skipped
//     S^T[j, :] = sum_d k[j, d] * Q^T[d, :]   (k read in place, broadcast;
//                                              a qkKeys x qkRowVectors register
//                                              block from the target)
//     partial / edge tiles, or a score_mod:   per element score_mod, mask,
//                                             mask_mod, invalid keys -> -inf
//                                             (window masks without mods: on
//                                             vectors of rows)
//     online softmax, per vector of rows:     m' = max(m, max_j S^T[j, :]),
//                                             P^T = exp(S^T - m'),
//                                             l = l e^(m - m') + sum_j P^T
//                                             (plain max, exp for x <= 0)
//     acc[i, :] = acc[i, :] e^(m - m') + sum_j P[i, j] v[k0 + j, :]
//                                             (v read in place; a pvRows x
//                                             pvVectors register block)
//   out = acc / l, lse = m + log l; rows with l == 0 give out = 0, lse = -inf
//
// Dp is head_dim rounded up to the vector width; padding is zero, so it never
// changes a dot product. Integer divisions inside inlined mods are guarded: a
// zero divisor sets the function's status to 1 instead of trapping.
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttnToCPU/FlashKernel.h"

#include "attnc/Conversion/AttnToCPU/ExpNonPositive.h"
#include "attnc/Conversion/AttnToCPU/TransposeSquare.h"
#include "attnc/Runtime/attnc_runtime.h"
#include "attnc/Transforms/TileClassifier.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Independent max / sum chains in the softmax loops (block_kv is a multiple
/// of the vector width, so of 4).
constexpr int64_t kSoftmaxChains = 4;

/// f32 elements per 64-byte cache line, the prefetch granule.
constexpr int64_t kFloatsPerLine = 16;

/// The largest d <= limit dividing n (n, limit >= 1).
int64_t largestDivisorUpTo(int64_t n, int64_t limit) {
  int64_t d = std::min(n, limit);
  while (n % d != 0)
    --d;
  return d;
}

/// (batch, head, seq) strides of one tensor, read from the params array.
struct Strides {
  Value batch, head, seq;
};

class FlashKernelBuilder {
public:
  FlashKernelBuilder(FlashOp op, const CpuKernelConfig &config,
                     ImplicitLocOpBuilder &b)
      : op(op), cfg(config), b(b), dim(op.getDim()), blockQ(op.getTileQ()),
        blockKv(op.getTileKv()), base2Scores(op.getScoreMod().empty()),
        dimPadded((dim + config.vectorWidth - 1) / config.vectorWidth *
                  config.vectorWidth) {}

  void build(func::FuncOp func, StringRef counterName);

private:
  // Small builders.
  Value idx(int64_t v) { return b.create<arith::ConstantIndexOp>(v); }
  Value f32(float v) { return b.create<arith::ConstantFloatOp>(b.getF32Type(), APFloat(v)); }
  Value negInf() { return f32(-std::numeric_limits<float>::infinity()); }
  Value add(Value x, Value y) { return b.create<arith::AddIOp>(x, y); }
  Value mul(Value x, Value y) { return b.create<arith::MulIOp>(x, y); }
  Value minIdx(Value x, Value y) { return b.create<arith::MinSIOp>(x, y); }
  Value lt(Value x, Value y) {
    return b.create<arith::CmpIOp>(arith::CmpIPredicate::slt, x, y);
  }
  VectorType vecType() { return VectorType::get({cfg.vectorWidth}, b.getF32Type()); }
  Value zeroVector(OpBuilder &nb, Location loc) {
    return nb.create<arith::ConstantOp>(loc, DenseElementsAttr::get(vecType(), nb.getF32FloatAttr(0)));
  }
  Value stackBuffer(ArrayRef<int64_t> shape, Type elem) {
    return b.create<memref::AllocaOp>(MemRefType::get(shape, elem));
  }
  template <typename Fn> void loop(Value lo, Value hi, int64_t step, Fn body) {
    b.create<scf::ForOp>(lo, hi, idx(step), ValueRange{},
                         [&](OpBuilder &nested, Location loc, Value iv, ValueRange) {
                           OpBuilder::InsertionGuard guard(b);
                           b.setInsertionPoint(nested.getInsertionBlock(),
                                               nested.getInsertionPoint());
                           body(iv);
                           b.create<scf::YieldOp>();
                         });
  }
  template <typename Fn> void loop(int64_t lo, Value hi, int64_t step, Fn body) {
    loop(idx(lo), hi, step, body);
  }
  template <typename Fn> void loop(int64_t lo, int64_t hi, int64_t step, Fn body) {
    loop(idx(lo), idx(hi), step, body);
  }
  template <typename Fn> void ifThen(Value cond, Fn body) {
    auto ifOp = b.create<scf::IfOp>(cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    body();
  }
  /// scf.if yielding one value of `type` from each branch.
  template <typename Then, typename Else>
  Value select(Value cond, Type type, Then thenFn, Else elseFn) {
    auto ifOp = b.create<scf::IfOp>(TypeRange{type}, cond, true, true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      b.create<scf::YieldOp>(thenFn());
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      b.create<scf::YieldOp>(elseFn());
    }
    return ifOp.getResult(0);
  }

  // Pieces of the kernel.
  Value readParam(int64_t index);
  Strides readStrides(int64_t first);
  Value offset(const Strides &s, Value batch, Value head, Value row);
  void loadQueryTile();
  void zeroFill(Value buffer, ArrayRef<int64_t> shape);
  Value loadValue(OpBuilder &nb, Location loc, Value row, int64_t d);
  std::pair<Value, Value> classifyKvTile(Value kTile);
  Value nextVisitedTile(Value from, Value end);
  void visitTile(Value kTile, Value prefetch, Value prefetchK0, StringRef counterName);
  void prefetchKvRow(Value row);
  void computeScores(Value k0, Value cols, Value prefetch, Value prefetchK0);
  void applyModsAndMask(Value q0, Value k0, Value cols, Value full);
  void applyMaskVectorized(Value k0, Value cols, Value full);
  Value inlineMod(Region &region, ArrayRef<Value> args);
  Value plainMax(OpBuilder &nb, Location loc, Value x, Value y);
  template <typename Step> SmallVector<Value> foldKeys(Value init, Step step);
  void onlineSoftmax();
  void accumulatePV(Value k0, Value cols);
  void writeOutputs();

  FlashOp op;
  CpuKernelConfig cfg;
  ImplicitLocOpBuilder &b;
  int64_t dim, blockQ, blockKv;
  /// Scores in units of log2(e) (log2(e) folded into the query scale): the
  /// softmax exponentiates with 2^x and saves a multiply per score. Not with
  /// a score_mod, which must see natural-unit scores.
  bool base2Scores;
  int64_t dimPadded;

  ModuleOp module;
  // Function arguments and values shared by the pieces.
  Value qBuf, kBuf, vBuf, outBuf, lseBuf, params, batch, head, kvHead;
  Value seqQ, seqKv, q0, rows;
  Strides qS, kS, vS, outS, lseS;
  Value QT, ST, Acc, M, L, ALPHA, status;
  Value vBatchHead; // offset of v[batch, kvHead, 0, 0]
};

Value FlashKernelBuilder::readParam(int64_t index) {
  Value v = b.create<memref::LoadOp>(params, idx(index));
  return b.create<arith::IndexCastOp>(b.getIndexType(), v);
}

Strides FlashKernelBuilder::readStrides(int64_t first) {
  return {readParam(first), readParam(first + 1), readParam(first + 2)};
}

Value FlashKernelBuilder::offset(const Strides &s, Value bIdx, Value hIdx,
                                 Value row) {
  return add(add(mul(bIdx, s.batch), mul(hIdx, s.head)), mul(row, s.seq));
}

void FlashKernelBuilder::zeroFill(Value buffer, ArrayRef<int64_t> shape) {
  Value zero = f32(0);
  loop(0, shape[0], 1, [&](Value i) {
    loop(0, shape[1], 1, [&](Value j) {
      b.create<memref::StoreOp>(zero, buffer, ValueRange{i, j});
    });
  });
}

/// Q^T = scale * q rows (times log2(e) for base-2 scores), transposed; padding rows and columns stay 0. Whole
/// w x w blocks (w = vector width) are transposed in registers; the rest of
/// the rows and of head_dim element by element. Sparse masks visit few KV
/// tiles per query tile, so this prologue is not negligible there (BigBird
/// at seq 8192 spent 7% of its time in a scalar transpose that LLVM had
/// turned into scatters).
void FlashKernelBuilder::loadQueryTile() {
  zeroFill(QT, {dimPadded, blockQ});
  int64_t w = cfg.vectorWidth, dimFull = dim / w * w;
  double log2e = 1.44269504088896341;
  Value scale = f32(op.getScaleAttr().getValueAsDouble() * (base2Scores ? log2e : 1.0));
  Value rowsFull = mul(b.create<arith::DivUIOp>(rows, idx(w)), idx(w));
  loop(0, rowsFull, w, [&](Value i0) {
    SmallVector<Value> bases;
    for (int64_t r = 0; r < w; ++r)
      bases.push_back(offset(qS, batch, head, add(q0, add(i0, idx(r)))));
    Value scaleVec = b.create<vector::BroadcastOp>(vecType(), scale);
    loop(0, dimFull, w, [&](Value d0) {
      SmallVector<Value> block;
      for (Value base : bases) {
        Value x = b.create<vector::LoadOp>(vecType(), qBuf, ValueRange{add(base, d0)});
        block.push_back(b.create<arith::MulFOp>(x, scaleVec));
      }
      emitTransposeSquare(b, b.getLoc(), block);
      for (int64_t c = 0; c < w; ++c)
        b.create<vector::StoreOp>(block[c], QT, ValueRange{add(d0, idx(c)), i0});
    });
  });
  auto scalarCopy = [&](Value rowLo, Value rowHi, int64_t dLo) {
    loop(rowLo, rowHi, 1, [&](Value i) {
      Value base = offset(qS, batch, head, add(q0, i));
      loop(dLo, idx(dim), 1, [&](Value d) {
        Value x = b.create<memref::LoadOp>(qBuf, add(base, d));
        b.create<memref::StoreOp>(b.create<arith::MulFOp>(x, scale), QT, ValueRange{d, i});
      });
    });
  };
  scalarCopy(idx(0), rowsFull, dimFull);
  scalarCopy(rowsFull, rows, 0);
}

/// One vector of a V row (`row`: the flat offset of its element 0), lanes
/// [d, d + w) of head_dim, read in place; a head_dim tail is a masked load
/// (zeros past head_dim).
Value FlashKernelBuilder::loadValue(OpBuilder &nb, Location loc, Value row, int64_t d) {
  int64_t w = cfg.vectorWidth;
  Value base = nb.create<arith::AddIOp>(loc, row, nb.create<arith::ConstantIndexOp>(loc, d));
  if (d + w <= dim)
    return nb.create<vector::LoadOp>(loc, vecType(), vBuf, ValueRange{base});
  auto maskType = VectorType::get({w}, nb.getI1Type());
  Value mask = nb.create<vector::CreateMaskOp>(
      loc, maskType, ValueRange{nb.create<arith::ConstantIndexOp>(loc, dim - d)});
  return nb.create<vector::MaskedLoadOp>(loc, vecType(), vBuf, ValueRange{base}, mask,
                                        zeroVector(nb, loc));
}

/// S^T[j, i..] = sum_d k[k0 + j, d] * Q^T[d, i..] for all blockQ rows, as a
/// block of keyBlock keys x rowVecs vectors of rows: per step of d, rowVecs
/// loads of Q^T and keyBlock scalar loads of k feed keyBlock * rowVecs FMAs.
/// Keys past the sequence read its last row (in bounds); they are masked later.
void FlashKernelBuilder::computeScores(Value k0, Value cols, Value prefetch,
                                       Value prefetchK0) {
  int64_t w = cfg.vectorWidth;
  // The block must tile blockKv x blockQ exactly: take the largest sizes up
  // to the configured ones that divide it.
  int64_t keyBlock = largestDivisorUpTo(blockKv, cfg.qkKeys);
  int64_t rowVecs = largestDivisorUpTo(blockQ / w, cfg.qkRowVectors);
  Value lastKey = b.create<arith::SubIOp>(cols, idx(1));
  loop(0, blockKv, keyBlock, [&](Value j0) {
    SmallVector<Value> keyRows, keyBases;
    for (int64_t r = 0; r < keyBlock; ++r) {
      keyRows.push_back(add(j0, idx(r)));
      keyBases.push_back(offset(kS, batch, kvHead, add(k0, minIdx(keyRows.back(), lastKey))));
    }
    // Spread over the key blocks, so the misses overlap the FMAs.
    ifThen(prefetch, [&] {
      for (Value key : keyRows)
        prefetchKvRow(add(prefetchK0, key));
    });
    loop(0, blockQ, rowVecs * w, [&](Value i0) {
      SmallVector<Value> rowCols;
      for (int64_t c = 0; c < rowVecs; ++c)
        rowCols.push_back(add(i0, idx(c * w)));
      SmallVector<Value> init(keyBlock * rowVecs, zeroVector(b, b.getLoc()));
      auto dot = b.create<scf::ForOp>(
          idx(0), idx(dim), idx(1), init,
          [&](OpBuilder &nb, Location loc, Value d, ValueRange acc) {
            SmallVector<Value> qv, next;
            for (Value col : rowCols)
              qv.push_back(nb.create<vector::LoadOp>(loc, vecType(), QT, ValueRange{d, col}));
            for (int64_t r = 0; r < keyBlock; ++r) {
              Value at = nb.create<arith::AddIOp>(loc, keyBases[r], d);
              Value kv = nb.create<memref::LoadOp>(loc, kBuf, ValueRange{at});
              Value kb = nb.create<vector::BroadcastOp>(loc, vecType(), kv);
              for (int64_t c = 0; c < rowVecs; ++c)
                next.push_back(nb.create<vector::FMAOp>(loc, kb, qv[c], acc[r * rowVecs + c]));
            }
            nb.create<scf::YieldOp>(loc, next);
          });
      for (int64_t r = 0; r < keyBlock; ++r)
        for (int64_t c = 0; c < rowVecs; ++c)
          b.create<vector::StoreOp>(dot.getResult(r * rowVecs + c), ST,
                                    ValueRange{keyRows[r], rowCols[c]});
    });
  });
}

/// Clones a score_mod / mask_mod body at the insertion point with its block
/// arguments bound to `args`; returns the yielded value.
Value FlashKernelBuilder::inlineMod(Region &region, ArrayRef<Value> args) {
  IRMapping map;
  Block &block = region.front();
  for (auto [arg, value] : llvm::zip(block.getArguments(), args))
    map.map(arg, value);
  for (Operation &inner : block.without_terminator()) {
    if (isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
            arith::FloorDivSIOp, arith::CeilDivSIOp>(inner)) {
      // Guard: a zero divisor would trap. Record it and divide by 1 instead.
      Value divisor = map.lookup(inner.getOperand(1));
      Value zero = b.create<arith::ConstantOp>(b.getZeroAttr(divisor.getType()));
      Value one = b.create<arith::ConstantOp>(b.getOneAttr(divisor.getType()));
      Value isZero = b.create<arith::CmpIOp>(arith::CmpIPredicate::eq, divisor, zero);
      ifThen(isZero, [&] {
        b.create<memref::StoreOp>(
            b.create<arith::ConstantIntOp>(1, 32), status, ValueRange{idx(0)});
      });
      map.map(inner.getOperand(1), b.create<arith::SelectOp>(isZero, one, divisor));
      b.clone(inner, map);
      map.map(inner.getOperand(1), divisor);
      continue;
    }
    b.clone(inner, map);
  }
  return map.lookup(block.getTerminator()->getOperand(0));
}

/// Partial or edge tiles of a window mask (causal, sliding windows and their
/// compositions) without mods: the keep test is index arithmetic, so it runs
/// on whole vectors of query rows (the lanes of S^T), 16 elements per compare
/// instead of one scalar branch each. Rows past `rows` are never written out.
void FlashKernelBuilder::applyMaskVectorized(Value k0, Value cols, Value full) {
  int64_t w = cfg.vectorWidth;
  auto indexVec = VectorType::get({w}, b.getIndexType());
  SmallVector<int64_t> iota(w);
  for (int64_t l = 0; l < w; ++l)
    iota[l] = l;
  Value lanes = b.create<arith::ConstantOp>(b.getIndexVectorAttr(iota));
  Value negInfVec = b.create<vector::BroadcastOp>(vecType(), negInf());
  auto boolVec = VectorType::get({w}, b.getI1Type());
  loop(0, blockKv, 1, [&](Value j) {
    Value kPos = b.create<vector::BroadcastOp>(indexVec, add(k0, j));
    // Keys past the sequence (an edge tile) are never kept.
    Value inKv = b.create<vector::BroadcastOp>(boolVec, lt(j, cols));
    Value fullVec = b.create<vector::BroadcastOp>(boolVec, full);
    loop(0, blockQ, w, [&](Value i) {
      Value qPos = b.create<arith::AddIOp>(
          b.create<vector::BroadcastOp>(indexVec, add(q0, i)), lanes);
      Value keep = emitMaskKeepsVector(b, b.getLoc(), op.getMask(), qPos, kPos, seqQ, seqKv);
      keep = b.create<arith::AndIOp>(b.create<arith::OrIOp>(keep, fullVec), inKv);
      Value s = b.create<vector::LoadOp>(vecType(), ST, ValueRange{j, i});
      b.create<vector::StoreOp>(b.create<arith::SelectOp>(keep, s, negInfVec), ST,
                                ValueRange{j, i});
    });
  });
}

/// Per element of a partial or edge tile (or any tile with a score_mod):
/// S = keep ? score_mod(S) : -inf.
void FlashKernelBuilder::applyModsAndMask(Value q0v, Value k0, Value cols,
                                          Value full) {
  if (op.getScoreMod().empty() && op.getMaskMod().empty() &&
      canEmitMaskKeepsVector(op.getMask()))
    return applyMaskVectorized(k0, cols, full);
  loop(0, rows, 1, [&](Value i) {
    Value qPos = add(q0v, i);
    loop(0, blockKv, 1, [&](Value j) {
      Value kPos = add(k0, j);
      Value score = select(lt(j, cols), b.getF32Type(), [&] {
        Value s = b.create<memref::LoadOp>(ST, ValueRange{j, i});
        if (!op.getScoreMod().empty())
          s = inlineMod(op.getScoreMod(), {s, batch, head, qPos, kPos});
        Value keep = select(full, b.getI1Type(),
            [&] { return b.create<arith::ConstantIntOp>(1, 1).getResult(); },
            [&] {
              Value k = emitMaskKeeps(b, b.getLoc(), module, op.getMask(), qPos, kPos, seqQ, seqKv);
              if (!op.getMaskMod().empty())
                k = b.create<arith::AndIOp>(
                    k, inlineMod(op.getMaskMod(), {batch, head, qPos, kPos}));
              return k;
            });
        return b.create<arith::SelectOp>(keep, s, negInf()).getResult();
      }, [&] { return negInf(); });
      b.create<memref::StoreOp>(score, ST, ValueRange{j, i});
    });
  });
}

/// A plain max: scores are never NaN unless the inputs or a score_mod make
/// them so, and then the NaN reaches the output through P anyway, so the
/// NaN-propagating arith.maximumf (six instructions per vector) buys nothing.
Value FlashKernelBuilder::plainMax(OpBuilder &nb, Location loc, Value x, Value y) {
  auto max = nb.create<arith::MaxNumFOp>(loc, x, y);
  max.setFastmath(arith::FastMathFlags::nnan | arith::FastMathFlags::nsz);
  return max;
}

/// Folds `step(nb, loc, j, acc)` over the keys of a tile with kSoftmaxChains
/// independent accumulators (j, j + 1, ... in turn), so a chain of dependent
/// max / add latencies does not serialize the loop; returns the chains.
template <typename Step>
SmallVector<Value> FlashKernelBuilder::foldKeys(Value init, Step step) {
  SmallVector<Value> inits(kSoftmaxChains, init);
  auto fold = b.create<scf::ForOp>(
      idx(0), idx(blockKv), idx(kSoftmaxChains), inits,
      [&](OpBuilder &nb, Location loc, Value j, ValueRange acc) {
        SmallVector<Value> next;
        for (int64_t u = 0; u < kSoftmaxChains; ++u)
          next.push_back(step(nb, loc,
                              nb.create<arith::AddIOp>(
                                  loc, j, nb.create<arith::ConstantIndexOp>(loc, u)),
                              acc[u]));
        nb.create<scf::YieldOp>(loc, next);
      });
  return SmallVector<Value>(fold.getResults());
}

/// Per vector of rows: m' = max(m, max_j S^T[j, :]); P^T = exp(S^T - m') in
/// place; l = l e^(m - m') + sum_j P^T; the factor e^(m - m') is kept in
/// ALPHA for the accumulator. Lanes with nothing kept so far (m' = -inf) use 0
/// as their shift, so their P is exp(-inf) = 0, never NaN. Every exponent is
/// <= 0, which emitExpNonPositive relies on. With base-2 scores, m, S and
/// the shifts are in units of log2(e) and every exp is a 2^x.
void FlashKernelBuilder::onlineSoftmax() {
  auto expNonPositive = base2Scores ? emitExp2NonPositive : emitExpNonPositive;
  int64_t w = cfg.vectorWidth;
  Location loc = b.getLoc();
  Value negInfVec = b.create<vector::BroadcastOp>(vecType(), negInf());
  Value zeros = zeroVector(b, loc);
  loop(0, blockQ, w, [&](Value i) {
    SmallVector<Value> maxes = foldKeys(negInfVec, [&](OpBuilder &nb, Location l, Value j, Value acc) {
      return plainMax(nb, l, acc, nb.create<vector::LoadOp>(l, vecType(), ST, ValueRange{j, i}));
    });
    Value mOld = b.create<vector::LoadOp>(vecType(), M, ValueRange{i});
    Value mNew = mOld;
    for (Value m : maxes)
      mNew = plainMax(b, loc, mNew, m);
    Value dead = b.create<arith::CmpFOp>(arith::CmpFPredicate::OEQ, mNew, negInfVec);
    Value shift = b.create<arith::SelectOp>(dead, zeros, mNew);
    Value alpha = expNonPositive(b, loc, b.create<arith::SubFOp>(mOld, shift));
    SmallVector<Value> sums = foldKeys(zeros, [&](OpBuilder &nb, Location l, Value j, Value acc) {
      Value s = nb.create<vector::LoadOp>(l, vecType(), ST, ValueRange{j, i});
      Value p = expNonPositive(nb, l, nb.create<arith::SubFOp>(l, s, shift));
      nb.create<vector::StoreOp>(l, p, ST, ValueRange{j, i});
      return nb.create<arith::AddFOp>(l, acc, p).getResult();
    });
    Value sum = sums.front();
    for (Value x : ArrayRef(sums).drop_front())
      sum = b.create<arith::AddFOp>(sum, x);
    Value lOld = b.create<vector::LoadOp>(vecType(), L, ValueRange{i});
    b.create<vector::StoreOp>(b.create<math::FmaOp>(lOld, alpha, sum), L, ValueRange{i});
    b.create<vector::StoreOp>(mNew, M, ValueRange{i});
    b.create<vector::StoreOp>(alpha, ALPHA, ValueRange{i});
  });
}

/// acc[i, :] = acc[i, :] * ALPHA[i] + sum_j P[i, j] V[k0 + j, :], register
/// blocked like Q K^T: a block of pvRows query rows x pvVectors vectors of
/// head_dim stays in registers for all keys of the tile; per key, pvVectors
/// loads of V (in place, no copy) and pvRows broadcasts of P feed
/// pvRows * pvVectors FMAs, and each accumulator is rescaled once per tile.
/// The head_dim slices are the outer loop so one slice of V stays in L1
/// across all row blocks. Rows past `rows` (last query tile) are computed on
/// zero queries and never written out.
void FlashKernelBuilder::accumulatePV(Value k0, Value cols) {
  int64_t w = cfg.vectorWidth;
  int64_t rowBlock = largestDivisorUpTo(blockQ, cfg.pvRows);
  int64_t vecBlock = largestDivisorUpTo(dimPadded / w, cfg.pvVectors);
  for (int64_t d0 = 0; d0 < dimPadded; d0 += vecBlock * w) {
    loop(0, blockQ, rowBlock, [&](Value i0) {
      SmallVector<Value> rowIdx, init;
      for (int64_t r = 0; r < rowBlock; ++r) {
        rowIdx.push_back(add(i0, idx(r)));
        Value alpha = b.create<vector::BroadcastOp>(
            vecType(), b.create<memref::LoadOp>(ALPHA, ValueRange{rowIdx.back()}));
        for (int64_t c = 0; c < vecBlock; ++c)
          init.push_back(b.create<arith::MulFOp>(
              b.create<vector::LoadOp>(vecType(), Acc,
                                       ValueRange{rowIdx.back(), idx(d0 + c * w)}),
              alpha));
      }
      auto sum = b.create<scf::ForOp>(
          idx(0), cols, idx(1), init,
          [&](OpBuilder &nb, Location loc, Value j, ValueRange acc) {
            Value key = nb.create<arith::AddIOp>(loc, k0, j);
            Value row = nb.create<arith::AddIOp>(
                loc, vBatchHead, nb.create<arith::MulIOp>(loc, key, vS.seq));
            SmallVector<Value> v, next;
            for (int64_t c = 0; c < vecBlock; ++c)
              v.push_back(loadValue(nb, loc, row, d0 + c * w));
            for (int64_t r = 0; r < rowBlock; ++r) {
              Value p = nb.create<vector::BroadcastOp>(
                  loc, vecType(), nb.create<memref::LoadOp>(loc, ST, ValueRange{j, rowIdx[r]}));
              for (int64_t c = 0; c < vecBlock; ++c)
                next.push_back(
                    nb.create<vector::FMAOp>(loc, p, v[c], acc[r * vecBlock + c]));
            }
            nb.create<scf::YieldOp>(loc, next);
          });
      for (int64_t r = 0; r < rowBlock; ++r)
        for (int64_t c = 0; c < vecBlock; ++c)
          b.create<vector::StoreOp>(sum.getResult(r * vecBlock + c), Acc,
                                    ValueRange{rowIdx[r], idx(d0 + c * w)});
    });
  }
}

void FlashKernelBuilder::writeOutputs() {
  // `out` is always written (the C ABI always takes it, see TileFlash.cpp).
  bool wantLse = op.hasOutput(OutputKind::lse);
  loop(0, rows, 1, [&](Value i) {
    Value l = b.create<memref::LoadOp>(L, ValueRange{i});
    Value empty = b.create<arith::CmpFOp>(arith::CmpFPredicate::OEQ, l, f32(0));
    Value row = add(q0, i);
    Value inv = b.create<arith::DivFOp>(f32(1), l);
    Value factor = b.create<arith::SelectOp>(empty, f32(0), inv);
    Value base = offset(outS, batch, head, row);
    loop(0, dim, 1, [&](Value d) {
      Value acc = b.create<memref::LoadOp>(Acc, ValueRange{i, d});
      b.create<memref::StoreOp>(b.create<arith::MulFOp>(acc, factor), outBuf, add(base, d));
    });
    if (wantLse) {
      Value m = b.create<memref::LoadOp>(M, ValueRange{i});
      if (base2Scores)
        m = b.create<arith::MulFOp>(m, f32(0.693147180559945309));
      Value lse = b.create<arith::AddFOp>(m, b.create<math::LogOp>(l));
      b.create<memref::StoreOp>(b.create<arith::SelectOp>(empty, negInf(), lse), lseBuf,
                                offset(lseS, batch, head, row));
    }
  });
}

/// (full, empty) of KV tile `kTile` for this query tile.
std::pair<Value, Value> FlashKernelBuilder::classifyKvTile(Value kTile) {
  Value k0 = mul(kTile, idx(blockKv));
  Value cols = minIdx(idx(blockKv), b.create<arith::SubIOp>(seqKv, k0));
  TileBounds<Value> bounds{q0, add(q0, rows), k0, add(k0, cols), seqQ, seqKv};
  return emitTileClass(b, b.getLoc(), module, op.getMask(), !op.getMaskMod().empty(),
                       bounds);
}

/// The first KV tile in [from, end) that the mask does not skip, or end.
Value FlashKernelBuilder::nextVisitedTile(Value from, Value end) {
  Type index = b.getIndexType();
  auto scan = b.create<scf::WhileOp>(TypeRange{index}, ValueRange{from});
  OpBuilder::InsertionGuard guard(b);
  Block *before = b.createBlock(&scan.getBefore(), {}, {index}, {b.getLoc()});
  Value t = before->getArgument(0);
  Value skip = select(lt(t, end), b.getI1Type(), [&] { return classifyKvTile(t).second; },
                      [&] { return b.create<arith::ConstantIntOp>(0, 1).getResult(); });
  b.create<scf::ConditionOp>(skip, ValueRange{t});
  Block *after = b.createBlock(&scan.getAfter(), {}, {index}, {b.getLoc()});
  b.create<scf::YieldOp>(ValueRange{add(after->getArgument(0), idx(1))});
  return scan.getResult(0);
}

/// One visited KV tile: scores, mods and mask where needed, online softmax,
/// P V; the rows of the tile at prefetchK0 are prefetched while the scores
/// are computed if `prefetch` holds.
void FlashKernelBuilder::visitTile(Value kTile, Value prefetch, Value prefetchK0,
                                   StringRef counterName) {
  Value k0 = mul(kTile, idx(blockKv));
  Value cols = minIdx(idx(blockKv), b.create<arith::SubIOp>(seqKv, k0));
  Value full = classifyKvTile(kTile).first;
  if (cfg.countTiles) {
    auto type = MemRefType::get({1}, b.getI64Type());
    Value counter = b.create<memref::GetGlobalOp>(type, counterName);
    b.create<memref::AtomicRMWOp>(arith::AtomicRMWKind::addi,
                                  b.create<arith::ConstantIntOp>(1, 64), counter,
                                  ValueRange{idx(0)});
  }
  computeScores(k0, cols, prefetch, prefetchK0);
  Value edge = lt(cols, idx(blockKv));
  bool needsElementPass = !op.getScoreMod().empty();
  Value elementPass = b.create<arith::OrIOp>(
      b.create<arith::OrIOp>(edge, b.create<arith::XOrIOp>(full, b.create<arith::ConstantIntOp>(1, 1))),
      b.create<arith::ConstantIntOp>(needsElementPass, 1));
  ifThen(elementPass, [&] { applyModsAndMask(q0, k0, cols, full); });
  onlineSoftmax();
  accumulatePV(k0, cols);
}

/// Prefetches every cache line of k and v row `row` (clamped to the last key).
void FlashKernelBuilder::prefetchKvRow(Value row) {
  Value clamped = minIdx(row, b.create<arith::SubIOp>(seqKv, idx(1)));
  Value kRow = offset(kS, batch, kvHead, clamped);
  Value vRow = offset(vS, batch, kvHead, clamped);
  for (int64_t d = 0; d < dim; d += kFloatsPerLine)
    for (auto [buf, base] : {std::pair{kBuf, kRow}, std::pair{vBuf, vRow}})
      b.create<memref::PrefetchOp>(buf, ValueRange{add(base, idx(d))}, /*isWrite=*/false,
                                   /*localityHint=*/3, /*isDataCache=*/true);
}

void FlashKernelBuilder::build(func::FuncOp func, StringRef counterName) {
  module = func->getParentOfType<ModuleOp>();
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  auto args = entry->getArguments();
  qBuf = args[0], kBuf = args[1], vBuf = args[2], outBuf = args[3], lseBuf = args[4];
  params = args[5], batch = args[6], head = args[7];
  Value qTile = args[8];
  kvHead = b.create<arith::DivUIOp>(head, idx(op.getHeads() / op.getKvHeads()));
  seqQ = readParam(ATTNC_P_SEQ_Q);
  seqKv = readParam(ATTNC_P_SEQ_KV);
  qS = readStrides(ATTNC_P_Q_STRIDES);
  kS = readStrides(ATTNC_P_K_STRIDES);
  vS = readStrides(ATTNC_P_V_STRIDES);
  outS = readStrides(ATTNC_P_OUT_STRIDES);
  vBatchHead = offset(vS, batch, kvHead, idx(0));
  lseS = readStrides(ATTNC_P_LSE_STRIDES);
  q0 = mul(qTile, idx(blockQ));
  rows = minIdx(idx(blockQ), b.create<arith::SubIOp>(seqQ, q0));

  Type f32Type = b.getF32Type();
  QT = stackBuffer({dimPadded, blockQ}, f32Type);
  ST = stackBuffer({blockKv, blockQ}, f32Type);
  Acc = stackBuffer({blockQ, dimPadded}, f32Type);
  M = stackBuffer({blockQ}, f32Type);
  L = stackBuffer({blockQ}, f32Type);
  ALPHA = stackBuffer({blockQ}, f32Type);
  status = stackBuffer({1}, b.getI32Type());
  b.create<memref::StoreOp>(b.create<arith::ConstantIntOp>(0, 32), status, ValueRange{idx(0)});
  loadQueryTile();
  zeroFill(Acc, {blockQ, dimPadded});
  loop(0, blockQ, 1, [&](Value i) {
    b.create<memref::StoreOp>(negInf(), M, ValueRange{i});
    b.create<memref::StoreOp>(f32(0), L, ValueRange{i});
  });

  // Only the KV tiles that can hold a kept key are classified at all: a
  // window's query tile costs O(window), not O(seq_kv).
  auto [keyLo, keyHi] =
      emitKeyRange(b, b.getLoc(), op.getMask(), q0, add(q0, rows), seqQ, seqKv);
  Value firstKvTile = b.create<arith::FloorDivSIOp>(
      b.create<arith::MaxSIOp>(keyLo, idx(0)), idx(blockKv));
  Value endKvTile = b.create<arith::CeilDivSIOp>(
      b.create<arith::MaxSIOp>(b.create<arith::MinSIOp>(keyHi, seqKv), idx(0)),
      idx(blockKv));
  // Visited tiles in order; while one is computed, the next one's k and v rows
  // are prefetched. Sparse masks visit few tiles per query tile, scattered or
  // not touched before, which demand misses otherwise fetch from DRAM (BigBird
  // at seq 8192: 71% -> 76% of the peak; dense gains ~1%, its next tile being
  // mostly in the hardware prefetcher's stream already).
  Value firstVisited = nextVisitedTile(firstKvTile, endKvTile);
  auto walk = b.create<scf::WhileOp>(TypeRange{b.getIndexType()}, ValueRange{firstVisited});
  {
    OpBuilder::InsertionGuard guard(b);
    Block *before = b.createBlock(&walk.getBefore(), {}, {b.getIndexType()}, {b.getLoc()});
    Value cur = before->getArgument(0);
    b.create<scf::ConditionOp>(lt(cur, endKvTile), ValueRange{cur});
    Block *after = b.createBlock(&walk.getAfter(), {}, {b.getIndexType()}, {b.getLoc()});
    cur = after->getArgument(0);
    Value next = nextVisitedTile(add(cur, idx(1)), endKvTile);
    visitTile(cur, lt(next, endKvTile), mul(next, idx(blockKv)), counterName);
    b.create<scf::YieldOp>(ValueRange{next});
  }
  writeOutputs();
  b.create<func::ReturnOp>(ValueRange{b.create<memref::LoadOp>(status, ValueRange{idx(0)})});
}

} // namespace

FailureOr<func::FuncOp>
mlir::attn::buildCpuFlashKernel(KernelOp kernel, const CpuKernelConfig &config) {
  FlashOp op = kernel.getFlash();
  if (!op)
    return kernel.emitOpError("expects its tiled form, attn.flash; run "
                              "attn-tile-flash first");
  if (!op.getDtype().isF32())
    return op.emitOpError("the CPU backend supports dtype f32 only, got ")
           << op.getDtype();
  for (auto [name, size] : {std::pair<StringRef, int64_t>{"block_q", op.getTileQ()},
                             {"block_kv", op.getTileKv()}})
    if (size % config.vectorWidth != 0)
      return op.emitOpError()
             << name << " (" << size
             << ") must be a multiple of the CPU target's vector width ("
             << config.vectorWidth << " f32 lanes)";

  MLIRContext *ctx = kernel.getContext();
  ImplicitLocOpBuilder b(kernel.getLoc(), ctx);
  b.setInsertionPoint(kernel);
  std::string name = (kernel.getSymName() + "_tile").str();
  std::string counter = (kernel.getSymName() + "_tiles_visited").str();
  if (config.countTiles) {
    auto type = MemRefType::get({1}, b.getI64Type());
    b.create<memref::GlobalOp>(
        counter, b.getStringAttr("public"), type,
        DenseElementsAttr::get(RankedTensorType::get({1}, b.getI64Type()), int64_t(0)),
        /*constant=*/false, /*alignment=*/nullptr);
  }
  Type f32Buf = MemRefType::get({ShapedType::kDynamic}, b.getF32Type());
  Type i64Buf = MemRefType::get({ShapedType::kDynamic}, b.getI64Type());
  Type index = b.getIndexType();
  auto type = FunctionType::get(
      ctx, {f32Buf, f32Buf, f32Buf, f32Buf, f32Buf, i64Buf, index, index, index},
      {b.getI32Type()});
  auto func = b.create<func::FuncOp>(name, type);
  func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  ImplicitLocOpBuilder body(op.getLoc(), ctx);
  FlashKernelBuilder(op, config, body).build(func, counter);
  return func;
}
