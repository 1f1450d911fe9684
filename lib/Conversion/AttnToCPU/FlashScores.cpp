//===- FlashScores.cpp - Q^T and the scores of a KV tile --------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Q^T for the query tile, S^T = K Q^T for each visited KV tile (register
// blocked, k read in place), and the element pass of partial tiles: score_mod,
// mask, mask_mod (vectorized for window masks without mods).
//
//===----------------------------------------------------------------------===//

#include "FlashKernelBuilder.h"

#include "attnc/Conversion/Common/InlineMod.h"

#include "attnc/Conversion/AttnToCPU/TransposeSquare.h"
#include "attnc/Transforms/TileClassifier.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

/// Q^T = scale * q rows (times log2(e) for base-2 scores), transposed; padding rows and columns stay 0. Whole
/// w x w blocks (w = vector width) are transposed in registers; the rest of
/// the rows and of head_dim element by element. Sparse masks visit few KV
/// tiles per query tile, so this prologue is not negligible there (BigBird
/// at seq 8192 spent 7% of its time in a scalar transpose that LLVM had
/// turned into scatters).
void FlashKernelBuilder::loadQueryTile() {
  // Only the columns of rows past the sequence are read before written (the
  // score loops stop at head_dim).
  ifThen(lt(rows, idx(blockQ)), [&] { zeroFill(QT, {dimPadded, blockQ}); });
  int64_t w = cfg.vectorWidth, dimFull = dim / w * w;
  Value scale = f32(queryScale());
  Value rowsFull = mul(arith::DivUIOp::create(b, rows, idx(w)), idx(w));
  loop(0, rowsFull, w, [&](Value i0) {
    SmallVector<Value> bases;
    for (int64_t r = 0; r < w; ++r)
      bases.push_back(offset(qS, batch, head, add(q0, add(i0, idx(r)))));
    Value scaleVec = vector::BroadcastOp::create(b, vecType(), scale);
    loop(0, dimFull, w, [&](Value d0) {
      SmallVector<Value> block;
      for (Value base : bases) {
        Value x = vector::LoadOp::create(b, elemVecType(), qBuf, ValueRange{add(base, d0)});
        block.push_back(arith::MulFOp::create(b, toF32(b, b.getLoc(), x), scaleVec));
      }
      emitTransposeSquare(b, b.getLoc(), block);
      for (int64_t c = 0; c < w; ++c)
        vector::StoreOp::create(b, block[c], QT, ValueRange{add(d0, idx(c)), i0});
    });
  });
  auto scalarCopy = [&](Value rowLo, Value rowHi, int64_t dLo) {
    loop(rowLo, rowHi, 1, [&](Value i) {
      Value base = offset(qS, batch, head, add(q0, i));
      loop(dLo, idx(dim), 1, [&](Value d) {
        Value x = toF32(b, b.getLoc(), memref::LoadOp::create(b, qBuf, add(base, d)));
        memref::StoreOp::create(b, arith::MulFOp::create(b, x, scale), QT, ValueRange{d, i});
      });
    });
  };
  scalarCopy(idx(0), rowsFull, dimFull);
  scalarCopy(rowsFull, rows, 0);
}

/// The factor on q k: the spec's scale, in units of log2(e) for base-2 scores
/// (additive scores: 1, Q^T holds q as it is; their sums take the factor).
double FlashKernelBuilder::queryScale() {
  double log2e = 1.44269504088896341;
  if (additive)
    return 1.0;
  return op.getScaleAttr().getValueAsDouble() * (base2Scores ? log2e : 1.0);
}

/// If hasNextTile: the k rows nextK0 + keyRows of the next visited tile
/// (clamped), and their v rows if valuesInScores. Otherwise (the last visited
/// tile): a share of the next query tile's q rows, which the runtime usually
/// hands this thread next (it claims runs of consecutive tiles); sparse masks
/// have few KV tiles per query tile to hide that miss behind (BigBird lost ~3%
/// to it; prefetching this tile's out rows as well lost 3%). Called once per
/// key block, so the misses spread over the tile and overlap the FMAs.
void FlashKernelBuilder::prefetchKeyBlock(ArrayRef<Value> keyRows) {
  Value nextQ0 = add(q0, idx(blockQ));
  auto ifOp = scf::IfOp::create(b, hasNextTile, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  Value lastKey = arith::SubIOp::create(b, seqKv, idx(1));
  for (Value key : keyRows)
    prefetchRow(kBuf, kS, kvHead, minIdx(add(nextK0, key), lastKey));
  ifThen(valuesInScores, [&] {
    for (Value key : keyRows)
      prefetchRow(vBuf, vS, kvHead, minIdx(add(nextK0, key), lastKey));
  });
  b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  ifThen(lt(nextQ0, seqQ), [&] {
    // Rows [first, first + perBlock) of the next tile for the key block
    // starting at keyRows[0]: the tile's key blocks cover its blockQ rows.
    int64_t perBlock = llvm::divideCeil(blockQ * int64_t(keyRows.size()), blockKv);
    Value first = arith::DivUIOp::create(b, mul(keyRows[0], idx(blockQ)), idx(blockKv));
    Value lastRow = arith::SubIOp::create(b, seqQ, idx(1));
    for (int64_t r = 0; r < perBlock; ++r)
      prefetchRow(qBuf, qS, head, minIdx(add(nextQ0, add(first, idx(r))), lastRow));
  });
}

/// Where key j of the tile starts: in k itself, or in KF (widened).
Value FlashKernelBuilder::keyRowOffset(Value k0, Value lastKey, Value j) {
  if (widen)
    return mul(j, idx(dimPadded));
  return offset(kS, batch, kvHead, add(k0, minIdx(j, lastKey)));
}

/// S^T for the keys [keyLo, keyHi) and the rows around [rowLo, rowHi) as
/// register blocks of keyBlock keys x rowVecs vectors of rows, each
/// accumulated over `trips` steps of `step` (given the block's key row
/// offsets and first row of each vector),
/// times `scale` (if given) when stored, or `fused`: with the softmax applied
/// in registers (fusedSoftmaxBlock), or `biased`: with the keep bias that
/// S^T holds applied (FlashMask.cpp). The k rows of the next visited tile
/// are prefetched once per key block. Keys past the sequence read its last row
/// (in bounds); they are masked later.
void FlashKernelBuilder::scoreBlocks(Value k0, Value cols, int64_t trips, Value scale,
                                     ScoreStep step, bool fused, bool biased) {
  int64_t w = cfg.vectorWidth;
  // The block must tile blockKv x blockQ exactly: take the largest sizes up
  // to the configured ones that divide it.
  int64_t keyBlock = scoreKeyBlock();
  int64_t rowVecs = largestDivisorUpTo(blockQ / w, cfg.qkRowVectors);
  Value lastKey = arith::SubIOp::create(b, cols, idx(1));
  loop(keyLo, keyHi, keyBlock, [&](Value j0) {
    SmallVector<Value> keyRows, keyBases;
    for (int64_t r = 0; r < keyBlock; ++r) {
      keyRows.push_back(add(j0, idx(r)));
      keyBases.push_back(keyRowOffset(k0, lastKey, keyRows.back()));
    }
    prefetchKeyBlock(keyRows);
    auto rowBlocks = [&](int64_t vecs, Value lo, Value hi) {
      loop(lo, hi, vecs * w, [&](Value i0) {
        SmallVector<Value> rowCols;
        for (int64_t c = 0; c < vecs; ++c)
          rowCols.push_back(add(i0, idx(c * w)));
        SmallVector<Value> init(keyBlock * vecs, zeroVector(b, b.getLoc()));
        auto sums = scf::ForOp::create(b, idx(0), idx(trips), idx(1), init,
                                       [&](OpBuilder &nb, Location loc, Value t, ValueRange acc) {
                                         scf::YieldOp::create(
                                             nb, loc, step(nb, loc, t, keyBases, rowCols, acc));
                                       });
        if (fused) {
          fusedSoftmaxBlock(keyRows, rowCols, sums.getResults());
        } else {
          for (int64_t r = 0; r < keyBlock; ++r)
            for (int64_t c = 0; c < vecs; ++c) {
              Value sum = sums.getResult(r * vecs + c);
              if (scale)
                sum = arith::MulFOp::create(b, sum, scale);
              if (biased) { // the mask's bias: 0 (kept) or -inf
                Value bias = vector::LoadOp::create(b, vecType(), ST,
                                                    ValueRange{keyRows[r], rowCols[c]});
                Value kept = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, bias,
                                                   zeroVector(b, b.getLoc()));
                sum = arith::SelectOp::create(b, kept, sum, bias);
              }
              vector::StoreOp::create(b, sum, ST, ValueRange{keyRows[r], rowCols[c]});
            }
        }
        unrollSteps(sums);
      });
    };
    // Rows [lo, hi): [rowLo, rowHi) in whole blocks of `vecs` vectors.
    auto around = [&](int64_t vecs) -> std::pair<Value, Value> {
      int64_t n = vecs * w;
      return {mul(arith::DivUIOp::create(b, rowLo, idx(n)), idx(n)),
              mul(arith::CeilDivUIOp::create(b, rowHi, idx(n)), idx(n))};
    };
    Value lo, hi, halfLo, halfHi;
    std::tie(lo, hi) = around(rowVecs);
    int64_t half = rowVecs < 2 ? rowVecs : largestDivisorUpTo(blockQ / w, rowVecs / 2);
    if (!biased || half == rowVecs)
      return rowBlocks(rowVecs, lo, hi);
    // A hull that whole blocks cover loosely takes blocks half as tall over
    // it (the rows around it get their bias, -inf). Half, not one vector: the
    // accumulators must still cover the FMA latency (4 cycles x 2 ports on
    // Intel cores).
    std::tie(halfLo, halfHi) = around(half);
    ifThenElse(
        lt(arith::SubIOp::create(b, halfHi, halfLo), arith::SubIOp::create(b, hi, lo)),
        [&] { rowBlocks(half, halfLo, halfHi); }, [&] { rowBlocks(rowVecs, lo, hi); });
  });
}

/// S^T[j, i..] = sum_d k[k0 + j, d] * Q^T[d, i..] (Q^T holds the scale): per
/// step of d, rowVecs loads of Q^T and keyBlock scalar loads of k (in place,
/// or widened in KF) feed keyBlock * rowVecs FMAs. `fused`: P^T instead of
/// S^T (fusedScores).
void FlashKernelBuilder::computeScores(Value k0, Value cols, bool fused, bool biased) {
  if (additive)
    return computeAdditiveScores(k0, cols, biased);
  scoreBlocks(k0, cols, dim, /*scale=*/Value(),
              [&](OpBuilder &nb, Location loc, Value d, ArrayRef<Value> keyBases,
                  ArrayRef<Value> rowCols, ValueRange acc) {
                return scoreStep(nb, loc, d, keyBases, rowCols, acc,
                                 [&](Value kb, Value q, Value sum) -> Value {
                                   return vector::FMAOp::create(nb, loc, kb, q, sum);
                                 });
              },
              fused, biased);
}

/// Step d of a Q K^T register block: per key r and vector of rows c, the
/// next accumulator `combine`(k[r, d] broadcast, Q^T[d, c..], acc[r, c]).
SmallVector<Value> FlashKernelBuilder::scoreStep(OpBuilder &nb, Location loc, Value d,
                                                 ArrayRef<Value> keyBases,
                                                 ArrayRef<Value> rowCols, ValueRange acc,
                                                 ScoreCombine combine) {
  SmallVector<Value> qv, next;
  for (Value col : rowCols)
    qv.push_back(vector::LoadOp::create(nb, loc, vecType(), QT, ValueRange{d, col}));
  for (auto [r, base] : llvm::enumerate(keyBases)) {
    Value at = arith::AddIOp::create(nb, loc, base, d);
    Value kv = memref::LoadOp::create(nb, loc, widen ? KF : kBuf, ValueRange{at});
    Value kb = vector::BroadcastOp::create(nb, loc, vecType(), kv);
    for (auto [c, q] : llvm::enumerate(qv))
      next.push_back(combine(kb, q, acc[r * qv.size() + c]));
  }
  return next;
}

/// A score_mod / mask_mod body inlined; a zero divisor sets the function's
/// status to 1 (the runtime reports it) and divides by 1.
Value FlashKernelBuilder::inlineMod(Region &region, ArrayRef<Value> args) {
  auto onZero = [&](Value isZero) {
    ifThen(isZero, [&] {
      memref::StoreOp::create(b, arith::ConstantIntOp::create(b, 1, 32), status,
                              ValueRange{idx(0)});
    });
  };
  // A load outside its input reads nothing and sets the status to the code
  // that names the input.
  auto load = [&](Operation *op, ArrayRef<Value> indices) {
    return modInputs.load(b, b.getLoc(), cast<LoadOp>(op), indices,
                          [&](OpBuilder &nb, int32_t code) {
                            memref::StoreOp::create(
                                nb, b.getLoc(), arith::ConstantIntOp::create(nb, b.getLoc(), code, 32),
                                status, ValueRange{idx(0)});
                          });
  };
  return attn::inlineMod(b, b.getLoc(), region, args, onZero, load);
}

/// The function's status becomes `code` where `failed` (an i1) holds.
void FlashKernelBuilder::setStatusIf(Value failed, int32_t code) {
  ifThen(failed, [&] {
    memref::StoreOp::create(b, arith::ConstantIntOp::create(b, code, 32), status,
                            ValueRange{idx(0)});
  });
}

/// Per element of a partial or edge tile (or any tile with a score_mod),
/// where the mask cannot run first (maskFirst): S = keep ? score_mod(S) : -inf.
void FlashKernelBuilder::applyModsAndMask(Value q0v, Value k0, Value cols,
                                          Value full) {
  loop(0, rows, 1, [&](Value i) {
    Value qPos = add(q0v, i);
    loop(0, blockKv, 1, [&](Value j) {
      Value kPos = add(k0, j);
      Value score = select(
          lt(j, cols), b.getF32Type(),
          [&] {
            Value s = memref::LoadOp::create(b, ST, ValueRange{j, i});
            if (!op.getScoreMod().empty())
              s = inlineMod(op.getScoreMod(), {s, batch, head, qPos, kPos});
            Value keep = select(
                full, b.getI1Type(),
                [&] { return arith::ConstantIntOp::create(b, 1, 1).getResult(); },
                [&] {
                  Value k =
                      emitMaskKeeps(b, b.getLoc(), module, op.getMask(), qPos, kPos, seqQ, seqKv);
                  if (!op.getMaskMod().empty())
                    k = arith::AndIOp::create(
                        b, k, inlineMod(op.getMaskMod(), {batch, head, qPos, kPos}));
                  return k;
                });
            return arith::SelectOp::create(b, keep, s, negInf()).getResult();
          },
          [&] { return negInf(); });
      memref::StoreOp::create(b, score, ST, ValueRange{j, i});
    });
  });
}
