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

/// The factor on q k: the spec's scale, in units of log2(e) for base-2 scores.
double FlashKernelBuilder::queryScale() {
  double log2e = 1.44269504088896341;
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

/// S^T for all blockQ rows and blockKv keys as register blocks of keyBlock
/// keys x rowVecs vectors of rows, each accumulated over `trips` steps of
/// `step` (given the block's key row offsets and first row of each vector),
/// times `scale` (if given) when stored, or `fused`: with the softmax applied
/// in registers (fusedSoftmaxBlock). The k rows of the next visited tile are
/// prefetched once per key block. Keys past the sequence read its last row
/// (in bounds); they are masked later.
void FlashKernelBuilder::scoreBlocks(Value k0, Value cols, int64_t trips, Value scale,
                                     ScoreStep step, bool fused) {
  int64_t w = cfg.vectorWidth;
  // The block must tile blockKv x blockQ exactly: take the largest sizes up
  // to the configured ones that divide it.
  int64_t keyBlock = largestDivisorUpTo(blockKv, cfg.qkKeys);
  int64_t rowVecs = largestDivisorUpTo(blockQ / w, cfg.qkRowVectors);
  Value lastKey = arith::SubIOp::create(b, cols, idx(1));
  loop(0, blockKv, keyBlock, [&](Value j0) {
    SmallVector<Value> keyRows, keyBases;
    for (int64_t r = 0; r < keyBlock; ++r) {
      keyRows.push_back(add(j0, idx(r)));
      keyBases.push_back(keyRowOffset(k0, lastKey, keyRows.back()));
    }
    prefetchKeyBlock(keyRows);
    loop(0, blockQ, rowVecs * w, [&](Value i0) {
      SmallVector<Value> rowCols;
      for (int64_t c = 0; c < rowVecs; ++c)
        rowCols.push_back(add(i0, idx(c * w)));
      SmallVector<Value> init(keyBlock * rowVecs, zeroVector(b, b.getLoc()));
      auto sums = scf::ForOp::create(b, idx(0), idx(trips), idx(1), init,
                                     [&](OpBuilder &nb, Location loc, Value t, ValueRange acc) {
                                       scf::YieldOp::create(
                                           nb, loc, step(nb, loc, t, keyBases, rowCols, acc));
                                     });
      if (fused) {
        fusedSoftmaxBlock(keyRows, rowCols, sums.getResults());
      } else {
        for (int64_t r = 0; r < keyBlock; ++r)
          for (int64_t c = 0; c < rowVecs; ++c) {
            Value sum = sums.getResult(r * rowVecs + c);
            if (scale)
              sum = arith::MulFOp::create(b, sum, scale);
            vector::StoreOp::create(b, sum, ST, ValueRange{keyRows[r], rowCols[c]});
          }
      }
      unrollSteps(sums);
    });
  });
}

/// S^T[j, i..] = sum_d k[k0 + j, d] * Q^T[d, i..] (Q^T holds the scale): per
/// step of d, rowVecs loads of Q^T and keyBlock scalar loads of k (in place,
/// or widened in KF) feed keyBlock * rowVecs FMAs. `fused`: P^T instead of
/// S^T (fusedScores).
void FlashKernelBuilder::computeScores(Value k0, Value cols, bool fused) {
  scoreBlocks(k0, cols, dim, /*scale=*/Value(),
              [&](OpBuilder &nb, Location loc, Value d, ArrayRef<Value> keyBases,
                  ArrayRef<Value> rowCols, ValueRange acc) {
                SmallVector<Value> qv, next;
                for (Value col : rowCols)
                  qv.push_back(vector::LoadOp::create(nb, loc, vecType(), QT, ValueRange{d, col}));
                for (auto [r, base] : llvm::enumerate(keyBases)) {
                  Value at = arith::AddIOp::create(nb, loc, base, d);
                  Value kv = memref::LoadOp::create(nb, loc, widen ? KF : kBuf, ValueRange{at});
                  Value kb = vector::BroadcastOp::create(nb, loc, vecType(), kv);
                  for (auto [c, q] : llvm::enumerate(qv))
                    next.push_back(vector::FMAOp::create(nb, loc, kb, q, acc[r * qv.size() + c]));
                }
                return next;
              },
              fused);
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
  Value lanes = arith::ConstantOp::create(b, b.getIndexVectorAttr(iota));
  Value negInfVec = vector::BroadcastOp::create(b, vecType(), negInf());
  auto boolVec = VectorType::get({w}, b.getI1Type());
  loop(0, blockKv, 1, [&](Value j) {
    Value kPos = vector::BroadcastOp::create(b, indexVec, add(k0, j));
    // Keys past the sequence (an edge tile) are never kept.
    Value inKv = vector::BroadcastOp::create(b, boolVec, lt(j, cols));
    Value fullVec = vector::BroadcastOp::create(b, boolVec, full);
    loop(0, blockQ, w, [&](Value i) {
      Value qPos =
          arith::AddIOp::create(b, vector::BroadcastOp::create(b, indexVec, add(q0, i)), lanes);
      Value keep = emitMaskKeepsVector(b, b.getLoc(), op.getMask(), qPos, kPos, seqQ, seqKv);
      keep = arith::AndIOp::create(b, arith::OrIOp::create(b, keep, fullVec), inKv);
      Value s = vector::LoadOp::create(b, vecType(), ST, ValueRange{j, i});
      vector::StoreOp::create(b, arith::SelectOp::create(b, keep, s, negInfVec), ST,
                              ValueRange{j, i});
    });
  });
}

/// The function's status becomes `code` where `failed` (an i1) holds.
void FlashKernelBuilder::setStatusIf(Value failed, int32_t code) {
  ifThen(failed, [&] {
    memref::StoreOp::create(b, arith::ConstantIntOp::create(b, code, 32), status,
                            ValueRange{idx(0)});
  });
}

/// A partial or edge tile of a window mask and a mask_mod of integer ops and
/// loads (no score_mod): the body runs on whole vectors of query rows (the
/// lanes of S^T), in three stages, each where its operands change: the ops
/// of the rows alone (document_id[b, q]) once per tile for each vector of
/// rows, those of the key alone (document_id[b, kv]) once per key as
/// scalars, and the rest per key and vector of rows, loads as gathers.
/// Lanes past `rows` or `cols`, or of a full tile, are not evaluated: no
/// error comes from them, as in the scalar pass.
void FlashKernelBuilder::applyMaskModVectorized(Value k0, Value cols, Value full) {
  int64_t w = cfg.vectorWidth, blocks = blockQ / w;
  auto indexVec = VectorType::get({w}, b.getIndexType());
  auto boolVec = VectorType::get({w}, b.getI1Type());
  auto splat = [&](Value scalar) {
    return vector::BroadcastOp::create(b, VectorType::get({w}, scalar.getType()), scalar)
        .getResult();
  };
  SmallVector<int64_t> iota(w);
  for (int64_t l = 0; l < w; ++l)
    iota[l] = l;
  Value lanes = arith::ConstantOp::create(b, b.getIndexVectorAttr(iota));
  Value negInfVec = vector::BroadcastOp::create(b, vecType(), negInf());
  Value fullVec = splat(full);
  Region &maskMod = op.getMaskMod();
  Block &body = maskMod.front();
  llvm::DenseSet<Operation *> ofQ = attn::modOpsDependingOn(maskMod, 2);
  llvm::DenseSet<Operation *> ofKv = attn::modOpsDependingOn(maskMod, 3);
  auto gather = [&](Operation *load, ArrayRef<Value> indices, Value lanesValid) {
    return modInputs.gather(b, b.getLoc(), cast<LoadOp>(load), indices, lanesValid,
                            [&](Value failed, int32_t code) { setStatusIf(failed, code); });
  };
  // Rows: per vector of query rows, the ops that do not read kv.
  SmallVector<IRMapping> rowMaps(blocks);
  SmallVector<Value> qPos(blocks), rowValid(blocks);
  Value notFull = splat(notI1(full));
  for (int64_t blk = 0; blk < blocks; ++blk) {
    Value row = arith::AddIOp::create(b, splat(idx(blk * w)), lanes);
    qPos[blk] = arith::AddIOp::create(b, splat(q0), row);
    rowValid[blk] = arith::AndIOp::create(
        b, notFull, arith::CmpIOp::create(b, arith::CmpIPredicate::slt, row, splat(rows)));
    IRMapping &map = rowMaps[blk];
    map.map(body.getArgument(0), splat(batch));
    map.map(body.getArgument(1), splat(head));
    map.map(body.getArgument(2), qPos[blk]);
    attn::inlineModVectorOps(
        b, b.getLoc(), body, map, rowValid[blk], [&](Operation &o) { return !ofKv.contains(&o); },
        [&](Value zero) { setStatusIf(zero, 1); }, gather);
  }
  loop(0, blockKv, 1, [&](Value j) {
    Value kPos = add(k0, j);
    // Keys past the sequence (an edge tile) are never kept, nor evaluated.
    Value keyInside = lt(j, cols);
    Value evaluated = arith::AndIOp::create(b, keyInside, notI1(full));
    // The key: the ops of kv alone, once, as scalars
    IRMapping keyMap;
    keyMap.map(body.getArgument(0), batch);
    keyMap.map(body.getArgument(1), head);
    keyMap.map(body.getArgument(3), kPos);
    auto load = [&](Operation *l, ArrayRef<Value> indices) {
      return modInputs.load(b, b.getLoc(), cast<LoadOp>(l), indices,
                            [&](OpBuilder &, int32_t code) { setStatusIf(evaluated, code); });
    };
    // (with what they read that depends on neither, cheap scalars again here)
    attn::inlineModOps(
        b, b.getLoc(), body, keyMap, [&](Operation &o) { return !ofQ.contains(&o); },
        [&](Value zero) { setStatusIf(arith::AndIOp::create(b, zero, evaluated), 1); }, load);
    Value inKv = splat(keyInside);
    Value evaluatedVec = splat(evaluated);
    for (int64_t blk = 0; blk < blocks; ++blk) {
      IRMapping map = rowMaps[blk];
      map.map(body.getArgument(3), splat(kPos));
      for (Operation &o : body.without_terminator())
        if (ofKv.contains(&o) && !ofQ.contains(&o))
          map.map(o.getResult(0), splat(keyMap.lookup(o.getResult(0))));
      Value valid = arith::AndIOp::create(b, rowValid[blk], evaluatedVec);
      attn::inlineModVectorOps(
          b, b.getLoc(), body, map, valid, nullptr, [&](Value zero) { setStatusIf(zero, 1); },
          gather);
      Value kept = map.lookup(body.getTerminator()->getOperand(0));
      Value keep = emitMaskKeepsVector(b, b.getLoc(), op.getMask(), qPos[blk], splat(kPos),
                                       seqQ, seqKv);
      keep = arith::AndIOp::create(
          b, arith::OrIOp::create(b, arith::AndIOp::create(b, keep, kept), fullVec), inKv);
      Value at = idx(blk * w);
      Value sv = vector::LoadOp::create(b, vecType(), ST, ValueRange{j, at});
      vector::StoreOp::create(b, arith::SelectOp::create(b, keep, sv, negInfVec), ST,
                              ValueRange{j, at});
    }
  });
}

/// Per element of a partial or edge tile (or any tile with a score_mod):
/// S = keep ? score_mod(S) : -inf.
void FlashKernelBuilder::applyModsAndMask(Value q0v, Value k0, Value cols,
                                          Value full) {
  if (op.getScoreMod().empty() && op.getMaskMod().empty() &&
      canEmitMaskKeepsVector(op.getMask()))
    return applyMaskVectorized(k0, cols, full);
  if (op.getScoreMod().empty() && canEmitMaskKeepsVector(op.getMask()) &&
      attn::canInlineModVector(op.getMaskMod()))
    return applyMaskModVectorized(k0, cols, full);
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
