//===- ProjectionProduct.cpp - register-blocked x W^T + b tiles -----------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// ProductBuilder's tiles (ProjectionProduct.h).
//
//===----------------------------------------------------------------------===//

#include "ProjectionProduct.h"

#include "attnc/Conversion/AttnToCPU/TransposeSquare.h"

#include "FlashKernelBuilder.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

namespace {

constexpr int64_t kTile = kProductTile;

/// Up to this many rows, nn.Linear weights are read in place (fewRows)
/// rather than packed: on 8-lane targets kFewRows (Zen 3, 768 -> 2304
/// features: in place 1.17x faster at 25 rows, level at 64), on 16-lane
/// ones kFewRowsWide (Zen 4, AVX-512: in place 1.1-1.3x faster at 9 and 17
/// rows, level at 24, 1.1x slower at 40 and 1.2-1.3x at 64).
constexpr int64_t kFewRows = 64;
constexpr int64_t kFewRowsWide = 24;
/// Up to this many rows, MatMul weights [K, N] are read in place: their
/// rows are W^T's columns already, so packing them only copies them. But
/// each group of rows walks the tile's columns down rows N apart, where a
/// packed panel is contiguous: on 16-lane targets kFewRowsMatmulWide (Zen 4)
/// rows, on 8-lane ones kFewRowsMatmul (Zen 3, 768 -> 2304 features: in
/// place 1.1-1.8x faster at 1-4 rows; packed 1.1x faster at 6, 1.3x at 9,
/// 1.5x at 17 and 40).
constexpr int64_t kFewRowsMatmul = 4;
constexpr int64_t kFewRowsMatmulWide = 64;

} // namespace

/// `valid` (0 to w, at run time) lanes from `at` as f32, the others 0 and
/// not read. 16-bit types load whole vectors or lane by lane: LLVM expands
/// their masked loads on AVX2 into calls libgcc before 13 lacks.
Value ProductBuilder::loadDynamicLanes(Value buf, Value at, Value valid) {
  Type elem = cast<MemRefType>(buf.getType()).getElementType();
  auto type = VectorType::get({w}, elem);
  if (elem.isF32()) {
    Value mask = vector::CreateMaskOp::create(b, VectorType::get({w}, b.getI1Type()),
                                              ValueRange{valid});
    Value pass = arith::ConstantOp::create(b, DenseElementsAttr::get(type, b.getZeroAttr(elem)));
    return vector::MaskedLoadOp::create(b, type, buf, ValueRange{at}, mask, pass);
  }
  Value whole = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, valid, idx(w));
  return select(whole, vecType(), [&] {
    Value x = vector::LoadOp::create(b, type, buf, ValueRange{at});
    return arith::ExtFOp::create(b, vecType(), x).getResult();
  }, [&] {
    Value x = zeroVec();
    for (int64_t lane = 0; lane < w; ++lane) {
      Value e = select(lt(idx(lane), valid), b.getF32Type(), [&] {
        Value y = memref::LoadOp::create(b, buf, ValueRange{add(at, idx(lane))});
        return arith::ExtFOp::create(b, b.getF32Type(), y).getResult();
      }, [&] { return f32(0); });
      x = vector::InsertOp::create(b, e, x, ArrayRef<int64_t>{lane});
    }
    return x;
  });
}

/// AF = the tile's rows of A (0 past `rows` and past K).
void ProductBuilder::packRows(const ProductTile &t, Value AF, int64_t kPadded) {
  loop(0, kTile, 1, [&](Value i) {
    ifThenElse(
        lt(i, t.rows),
        [&] {
          Value row = add(t.aBase, mul(i, t.aStride));
          for (int64_t k = 0; k < kPadded; k += w)
            storeVec(loadDynamicLanes(t.aBuf, add(row, idx(k)), idx(std::min(w, t.k - k))),
                     AF, {i, idx(k)});
        },
        [&] {
          for (int64_t k = 0; k < kPadded; k += w)
            storeVec(zeroVec(), AF, {i, idx(k)});
        });
  });
}

/// WT = the tile's columns of W^T (0 past `cols` and past K): MatMul
/// weights [K, N] row by row; nn.Linear's [N, K] w x w lanes at a time,
/// transposed in registers.
void ProductBuilder::packColumns(const ProductTile &t, Value WT, int64_t kPadded) {
  if (matmulWeights) {
    loop(0, kPadded, 1, [&](Value k) {
      Value inside = lt(k, idx(t.k));
      for (int64_t j = 0; j < kTile; j += w) {
        Value valid = arith::SelectOp::create(b, inside, lanesOf(t.cols, idx(j)), idx(0));
        Value at = add(mul(k, t.wStride), add(t.wCol0, idx(j)));
        storeVec(loadDynamicLanes(t.wBuf, at, valid), WT, {k, idx(j)});
      }
    });
    return;
  }
  loop(0, kTile, w, [&](Value j0) {
    for (int64_t k = 0; k < kPadded; k += w) {
      SmallVector<Value> block;
      for (int64_t r = 0; r < w; ++r) {
        Value j = add(j0, idx(r));
        Value valid = arith::SelectOp::create(b, lt(j, t.cols), idx(std::min(w, t.k - k)), idx(0));
        Value row = mul(add(t.wCol0, minIdx(j, arith::SubIOp::create(b, t.cols, idx(1)))),
                        t.wStride);
        block.push_back(loadDynamicLanes(t.wBuf, add(row, idx(k)), valid));
      }
      emitTransposeSquare(b, b.getLoc(), block);
      for (int64_t l = 0; l < w; ++l)
        storeVec(block[l], WT, {idx(k + l), j0});
    }
  });
}

/// `valid` lanes of x into dest at `at`: one masked store for an f32
/// destination, else lane by lane, rounded to its element type.
void ProductBuilder::storeLanes(Value x, Value dest, Value at, Value valid) {
  Type elem = cast<MemRefType>(dest.getType()).getElementType();
  if (elem.isF32()) {
    Value mask = vector::CreateMaskOp::create(b, VectorType::get({w}, b.getI1Type()),
                                              ValueRange{valid});
    vector::MaskedStoreOp::create(b, dest, ValueRange{at}, mask, x);
    return;
  }
  for (int64_t lane = 0; lane < w; ++lane)
    ifThen(lt(idx(lane), valid), [&] {
      Value e = vector::ExtractOp::create(b, x, ArrayRef<int64_t>{lane});
      store(roundFromF32(b, b.getLoc(), e, elem, cfg.bf16Dot), dest, {add(at, idx(lane))});
    });
}

/// The tile for at most kFewRows rows against nn.Linear weights [N, K] (a
/// decode step's projection, a short prompt's): each weight row read in
/// place along K, then summed across lanes. A packed panel would read,
/// transpose and write the weights for a row or two. Groups of 6 rows x 2
/// weight rows (Zen 3, 768 -> 2304 features: 1.15-1.3x faster than 4 x 2 at
/// 5, 17 and 24 rows), 6 x 4 with 32 registers (Zen 4, AVX-512: 1.1x faster
/// than 6 x 2 at 17, 40 and 64 rows); a group of one or two rows takes 4
/// weight rows at a time (the loads of W, not the FMAs, bound it). Row groups
/// outside, weight rows inside: a group's rows (6 x K) stay in L1 while the
/// tile's weight rows (64 x K) stream from L2; the other way round every
/// step read its 6 rows from L2 (Zen 3, 17 rows, 768 -> 2304: 58-63% ->
/// 67-68% of the FMA peak).
void ProductBuilder::fewRows(const ProductTile &t, int64_t maxRows) {
  rowGroups(t.rows, maxRows,
            [&](Value g0, int64_t rows) { fewRowGroup(t, g0, rows, colsFor(rows)); });
}

/// `emit(i0, n)` for the groups of rows of [0, count), count <= maxRows:
/// whole groups of kGroupRows rows, then one of the n rows left, a block of
/// its own height (17 rows: 6 + 6 + 5; blocks of 6 only would compute row 16
/// twice, and 13 rows 18). Only the blocks `maxRows` allows are emitted:
/// each is a loop over K that costs compile time.
void ProductBuilder::rowGroups(Value count, int64_t maxRows,
                               function_ref<void(Value, int64_t)> emit) {
  Value whole = mul(arith::DivUIOp::create(b, count, idx(kGroupRows)), idx(kGroupRows));
  if (maxRows >= kGroupRows)
    loop(idx(0), whole, kGroupRows, [&](Value i0) { emit(i0, kGroupRows); });
  Value left = arith::SubIOp::create(b, count, whole);
  for (int64_t n = 1; n < std::min(kGroupRows, maxRows + 1); ++n)
    ifThen(arith::CmpIOp::create(b, arith::CmpIPredicate::eq, left, idx(n)),
           [&] { emit(whole, n); });
}

/// Rows [g0, g0 + groupRows) of fewRows in blocks of `groupCols` weight
/// rows (columns past the tile's read again, not stored).
void ProductBuilder::fewRowGroup(const ProductTile &t, Value g0, int64_t groupRows,
                                 int64_t groupCols) {
  int64_t whole = t.k / w * w;
  Value lastCol = arith::SubIOp::create(b, t.cols, idx(1));
  Value hasBias = arith::CmpIOp::create(b, arith::CmpIPredicate::sgt,
                                        memref::DimOp::create(b, t.biasBuf, 0), idx(0));
  Type elem = cast<MemRefType>(t.dest.getType()).getElementType();
  SmallVector<Value> aRows;
  for (int64_t r = 0; r < groupRows; ++r)
    aRows.push_back(add(t.aBase, mul(add(g0, idx(r)), t.aStride)));
  loop(idx(0), t.cols, groupCols, [&](Value j0) {
    SmallVector<Value> wRows;
    for (int64_t c = 0; c < groupCols; ++c)
      wRows.push_back(mul(add(t.wCol0, minIdx(add(j0, idx(c)), lastCol)), t.wStride));
    auto step = [&](Value k, int64_t valid, ValueRange acc) {
      SmallVector<Value> wv, next;
      for (Value row : wRows)
        wv.push_back(loadDynamicLanes(t.wBuf, add(row, k), idx(valid)));
      for (int64_t r = 0; r < groupRows; ++r) {
        Value x = loadDynamicLanes(t.aBuf, add(aRows[r], k), idx(valid));
        for (int64_t c = 0; c < groupCols; ++c)
          next.push_back(fma(x, wv[c], acc[r * groupCols + c]));
      }
      return next;
    };
    SmallVector<Value> acc = fold(
        idx(0), idx(whole), SmallVector<Value>(groupRows * groupCols, zeroVec()),
        [&](Value k, ValueRange acc) { return step(k, w, acc); }, w);
    if (whole < t.k)
      acc = step(idx(whole), t.k - whole, acc);
    // Each row's groupCols sums at once (sumEach), not one reduction each.
    SmallVector<Value> rowSums;
    for (int64_t r = 0; r < groupRows; ++r)
      rowSums.push_back(sumEach(ArrayRef(acc).slice(r * groupCols, groupCols)));
    for (int64_t c = 0; c < groupCols; ++c) {
      Value j = add(j0, idx(c));
      ifThen(lt(j, t.cols), [&] {
        Value bias = select(hasBias, b.getF32Type(), [&] {
          Value x = load(t.biasBuf, {mul(add(t.wCol0, j), t.biasStride)});
          return x.getType().isF32() ? x
                                     : arith::ExtFOp::create(b, b.getF32Type(), x).getResult();
        }, [&] { return f32(0); });
        for (int64_t r = 0; r < groupRows; ++r) {
          Value i = add(g0, idx(r));
          Value sum = vector::ExtractOp::create(b, rowSums[r], ArrayRef<int64_t>{c});
          Value at = add(add(t.destBase, mul(i, t.destStride)), j);
          store(roundFromF32(b, b.getLoc(), arith::AddFOp::create(b, sum, bias), elem,
                             cfg.bf16Dot),
                t.dest, {at});
        }
      });
    }
  });
}

/// Lane c of the result: the sum of vectors[c]'s lanes, for a power-of-two
/// count of w-lane vectors up to w. Pairs of vectors first (the even and the
/// odd lanes of each pair added: half a vector of sums from each), then the
/// one vector left in halves: n - 1 + log2(w / n) shuffle pairs for n sums,
/// where n reductions take n log2(w) (Zen 4, 17 rows x 768 -> 2304, 6 x 4
/// blocks: 24 sums per block of 48 steps of 24 FMAs).
Value ProductBuilder::sumEach(ArrayRef<Value> vectors) {
  auto halves = [&](Value x, Value y, int64_t lanes) {
    SmallVector<int64_t> evens, odds;
    for (int64_t l = 0; l < lanes; ++l) {
      evens.push_back(2 * l);
      odds.push_back(2 * l + 1);
    }
    return arith::AddFOp::create(b, vector::ShuffleOp::create(b, x, y, evens),
                                 vector::ShuffleOp::create(b, x, y, odds))
        .getResult();
  };
  SmallVector<Value> level(vectors);
  while (level.size() > 1) {
    SmallVector<Value> next;
    for (size_t n = 0; n < level.size(); n += 2)
      next.push_back(halves(level[n], level[n + 1], w));
    level = std::move(next);
  }
  Value sums = level.front();
  for (int64_t lanes = w; lanes > int64_t(vectors.size()); lanes /= 2)
    sums = halves(sums, sums, lanes / 2);
  return sums;
}

void ProductBuilder::product(const ProductTile &t) {
  if (!matmulWeights) {
    int64_t few = w >= 16 ? kFewRowsWide : kFewRows;
    ifThenElse(lt(t.rows, idx(few + 1)), [&] { fewRows(t, few); }, [&] { blocks(t, 0); });
    return;
  }
  int64_t few = w >= 16 ? kFewRowsMatmulWide : kFewRowsMatmul;
  ifThenElse(lt(t.rows, idx(few + 1)), [&] { blocks(t, few); }, [&] { blocks(t, 0); });
}

/// The tile as register blocks over one packed panel of weight columns, in
/// sub-tiles of 64 rows (the panel is packed once for all of them); with
/// `inPlaceRows` > 0 (MatMul weights, a tile of at most that many rows) over
/// W's rows where they are.
void ProductBuilder::blocks(const ProductTile &t, int64_t inPlaceRows) {
  bool inPlace = inPlaceRows > 0;
  int64_t kPadded = roundUp(t.k), vectors = kTile / w;
  // f32 rows are read where they are; 16-bit ones widened into AF once.
  bool packed = !cast<MemRefType>(t.aBuf.getType()).getElementType().isF32();
  Value AF = packed ? stackBuffer({kTile, kPadded}) : Value();
  Value WT = inPlace ? Value() : stackBuffer({kPadded, kTile});
  if (!inPlace)
    packColumns(t, WT, kPadded);
  auto weightVec = [&](Value k, int64_t c) -> Value {
    if (!inPlace)
      return loadVec(WT, {k, idx(c * w)});
    Value at = add(mul(k, t.wStride), add(t.wCol0, idx(c * w)));
    return loadDynamicLanes(t.wBuf, at, lanesOf(t.cols, idx(c * w)));
  };
  // The bias of each column vector (0 past `cols`, or without a bias).
  Value hasBias = arith::CmpIOp::create(b, arith::CmpIPredicate::sgt,
                                        memref::DimOp::create(b, t.biasBuf, 0), idx(0));
  SmallVector<Value> bias;
  for (int64_t c = 0; c < vectors; ++c) {
    Value valid = arith::SelectOp::create(b, hasBias, lanesOf(t.cols, idx(c * w)), idx(0));
    // A NULL bias is an empty view: every lane masked off, nothing read.
    Value at = arith::SelectOp::create(b, hasBias, mul(add(t.wCol0, idx(c * w)), t.biasStride),
                                       idx(0));
    bias.push_back(loadDynamicLanes(t.biasBuf, at, valid));
  }
  loop(idx(0), t.rows, kTile, [&](Value s0) {
    ProductTile sub = t;
    sub.aBase = add(t.aBase, mul(s0, t.aStride));
    sub.destBase = add(t.destBase, mul(s0, t.destStride));
    sub.rows = minIdx(idx(kTile), arith::SubIOp::create(b, t.rows, s0));
    if (packed)
      packRows(sub, AF, kPadded);
    rowBlocks(sub, AF, weightVec, bias, inPlaceRows);
  });
}

/// A sub-tile of at most 64 rows: register blocks of a group's rows x
/// colsFor(rows) vectors (6 x 2: 16 registers, 6 x 4: 32). Read in place (at
/// most `fewRows` rows), the groups of rowGroups; packed (`fewRows` 0), 64
/// rows at most as 10 blocks of 6 and one of 4 past which rows are read
/// again (row `rows - 1`) and not stored: two blocks of code, not six. Only
/// those (`past`) clamp their rows and guard their stores.
void ProductBuilder::rowBlocks(const ProductTile &t, Value AF, WeightVecFn weightVec,
                               ArrayRef<Value> bias, int64_t fewRows) {
  int64_t vectors = kTile / w;
  Value lastRow = arith::SubIOp::create(b, t.rows, idx(1));
  auto block = [&](Value i0, int64_t blockRows, bool past) {
    auto rowElement = [&](Value i, Value k) {
      if (AF)
        return load(AF, {i, k});
      Value row = past ? minIdx(i, lastRow) : i;
      return load(t.aBuf, {add(add(t.aBase, mul(row, t.aStride)), k)});
    };
    int64_t vecsPerBlock = colsFor(blockRows);
    for (int64_t c0 = 0; c0 < vectors; c0 += vecsPerBlock) {
      int64_t vecs = std::min(vecsPerBlock, vectors - c0);
      SmallVector<Value> init;
      for (int64_t r = 0; r < blockRows; ++r)
        for (int64_t c = 0; c < vecs; ++c)
          init.push_back(bias[c0 + c]);
      SmallVector<Value> acc = fold(idx(0), idx(t.k), init, [&](Value k, ValueRange acc) {
        SmallVector<Value> next, y;
        for (int64_t c = 0; c < vecs; ++c)
          y.push_back(weightVec(k, c0 + c));
        for (int64_t r = 0; r < blockRows; ++r) {
          Value x = splat(rowElement(add(i0, idx(r)), k));
          for (int64_t c = 0; c < vecs; ++c)
            next.push_back(fma(x, y[c], acc[r * vecs + c]));
        }
        return next;
      });
      for (int64_t r = 0; r < blockRows; ++r) {
        Value i = add(i0, idx(r));
        auto store = [&] {
          Value row = add(t.destBase, mul(i, t.destStride));
          for (int64_t c = 0; c < vecs; ++c)
            storeLanes(acc[r * vecs + c], t.dest, add(row, idx((c0 + c) * w)),
                       lanesOf(t.cols, idx((c0 + c) * w)));
        };
        if (past)
          ifThen(lt(i, t.rows), store);
        else
          store();
      }
    }
  };
  if (fewRows > 0)
    return rowGroups(t.rows, fewRows, [&](Value i0, int64_t rows) { block(i0, rows, false); });
  int64_t wholeRows = kTile / kGroupRows * kGroupRows;
  loop(0, t.rows, kGroupRows, [&](Value i0) {
    ifThenElse(lt(i0, idx(wholeRows)), [&] { block(i0, kGroupRows, true); },
               [&] { block(i0, kTile - wholeRows, true); });
  });
}

