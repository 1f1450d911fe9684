//===- FlashMask.cpp - a tile's mask before its scores, and its hull ------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Where the element pass of partial tiles runs on vectors of rows (no
// score_mod; a window mask; a mask_mod of integer ops and loads), it runs
// before Q K^T: it writes S^T's keep bias (0 where kept, -inf where not),
// which Q K^T applies as it stores each score, and the hull of the kept
// elements: the keys [keyLo, keyHi) and rows [rowLo, rowHi) that hold any,
// in the steps of the loops over them, and for each vector of rows its own
// keys. Q K^T computes the hull, the softmax and P V each vector's keys (a
// causal diagonal tile: 16, 32, 48 and 64 keys for its four vectors).
// Packed documents of random lengths visit tiles that a boundary crosses,
// where one document keeps a few rows or keys: there the hull is 9% less
// work than the tiles (16 documents in 8192 tokens: 1.21x the useful pairs
// -> 1.12x; the rows outside it keep P = 0, ALPHA = 1).
//
//===----------------------------------------------------------------------===//

#include "FlashKernelBuilder.h"

#include "attnc/Conversion/Common/InlineMod.h"
#include "attnc/Transforms/TileClassifier.h"

#include <numeric>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

bool FlashKernelBuilder::maskFirst() {
  return op.getScoreMod().empty() && canEmitMaskKeepsVector(op.getMask()) &&
         (op.getMaskMod().empty() || attn::canInlineModVector(op.getMaskMod()));
}

void FlashKernelBuilder::wholeTile() {
  keyLo = idx(0);
  keyHi = idx(blockKv);
  rowLo = idx(0);
  rowHi = rowsComputed;
  if (!staircase())
    return;
  for (int64_t v = 0; v < blockQ / cfg.vectorWidth; ++v) {
    memref::StoreOp::create(b, keyLo, ROWKEYS, ValueRange{idx(2 * v)});
    memref::StoreOp::create(b, keyHi, ROWKEYS, ValueRange{idx(2 * v + 1)});
  }
}

std::pair<Value, Value> FlashKernelBuilder::vectorKeys(Value row) {
  if (!staircase())
    return {keyLo, keyHi};
  Value at = mul(arith::DivUIOp::create(b, row, idx(cfg.vectorWidth)), idx(2));
  return {memref::LoadOp::create(b, ROWKEYS, ValueRange{at}),
          memref::LoadOp::create(b, ROWKEYS, ValueRange{add(at, idx(1))})};
}

/// S^T of the tile with its mask applied (S^T = -inf where not kept), and
/// its hull in keyLo, keyHi, rowLo, rowHi (and ROWKEYS): the keep bias
/// first where the mask runs first (a full tile's bias is 0), else the
/// scores and then, on a partial or edge tile, the element pass over the
/// whole tile.
void FlashKernelBuilder::maskedScores(Value k0, Value cols, Value full, Value elementPass) {
  auto scores = [&](bool biased) {
    if (dot)
      computeScoresDot(k0, cols, biased);
    else
      computeScores(k0, cols, /*fused=*/false, biased);
  };
  wholeTile();
  if (!maskFirst()) {
    scores(/*biased=*/false);
    ifThen(elementPass, [&] { applyModsAndMask(q0, k0, cols, full); });
    return;
  }
  Value whole[] = {keyLo, keyHi, rowLo, rowHi};
  ifThenElse(
      elementPass,
      [&] {
        for (int64_t v = 0; v < blockQ / cfg.vectorWidth; ++v) {
          memref::StoreOp::create(b, idx(blockKv), KEPT, ValueRange{idx(2 * v)});
          memref::StoreOp::create(b, idx(0), KEPT, ValueRange{idx(2 * v + 1)});
        }
        if (op.getMaskMod().empty())
          applyMaskVectorized(k0, cols, full);
        else
          applyMaskModVectorized(k0, cols, full);
        finishHull();
      },
      [&] {
        Value zeros = zeroVector(b, b.getLoc());
        loop(0, blockKv, 1, [&](Value j) {
          for (int64_t i = 0; i < blockQ; i += cfg.vectorWidth)
            vector::StoreOp::create(b, zeros, ST, ValueRange{j, idx(i)});
        });
        for (auto [i, bound] : llvm::enumerate(whole))
          memref::StoreOp::create(b, bound, HULL, ValueRange{idx(i)});
      });
  Value *bounds[] = {&keyLo, &keyHi, &rowLo, &rowHi};
  for (auto [i, bound] : llvm::enumerate(bounds))
    *bound = memref::LoadOp::create(b, HULL, ValueRange{idx(i)});
  scores(/*biased=*/true);
}

/// Key j's bias, one vector of rows per element of `keeps` (0 where kept,
/// -inf where not), and its share of each vector's kept keys (KEPT: keys
/// come in order, so the first kept one is the low end, the last the high).
void FlashKernelBuilder::storeKeepBias(Value j, ArrayRef<Value> keeps) {
  int64_t w = cfg.vectorWidth;
  Value zeros = zeroVector(b, b.getLoc());
  Value negInfVec = vector::BroadcastOp::create(b, vecType(), negInf());
  for (auto [v, keep] : llvm::enumerate(keeps)) {
    vector::StoreOp::create(b, arith::SelectOp::create(b, keep, zeros, negInfVec), ST,
                            ValueRange{j, idx(int64_t(v) * w)});
    Value some = vector::ReductionOp::create(b, vector::CombiningKind::OR, keep);
    Value loAt = idx(2 * int64_t(v)), hiAt = idx(2 * int64_t(v) + 1);
    Value lo = memref::LoadOp::create(b, KEPT, ValueRange{loAt});
    Value hi = memref::LoadOp::create(b, KEPT, ValueRange{hiAt});
    memref::StoreOp::create(b, arith::SelectOp::create(b, some, minIdx(lo, j), lo), KEPT,
                            ValueRange{loAt});
    memref::StoreOp::create(b, arith::SelectOp::create(b, some, add(j, idx(1)), hi), KEPT,
                            ValueRange{hiAt});
  }
}

/// From each vector's kept keys (KEPT): HULL = the tile's kept keys and rows,
/// and ROWKEYS = each vector's keys, widened to the steps of the loops over
/// them (key blocks of Q K^T and the softmax's chains, and so bf16 pairs;
/// vectors of rows and P V's row blocks), over the rows computed. No kept
/// element: empty ranges.
void FlashKernelBuilder::finishHull() {
  int64_t w = cfg.vectorWidth, vectors = blockQ / w, step = rowStep();
  int64_t keyStep = std::lcm(scoreKeyBlock(), kSoftmaxChains);
  Value bounds[4] = {idx(blockKv), idx(0), idx(blockQ), idx(0)};
  for (int64_t v = 0; v < vectors; ++v) {
    Value lo = memref::LoadOp::create(b, KEPT, ValueRange{idx(2 * v)});
    Value hi = memref::LoadOp::create(b, KEPT, ValueRange{idx(2 * v + 1)});
    lo = mul(arith::DivUIOp::create(b, lo, idx(keyStep)), idx(keyStep));
    hi = mul(arith::CeilDivUIOp::create(b, hi, idx(keyStep)), idx(keyStep));
    if (staircase()) {
      memref::StoreOp::create(b, lo, ROWKEYS, ValueRange{idx(2 * v)});
      memref::StoreOp::create(b, hi, ROWKEYS, ValueRange{idx(2 * v + 1)});
    }
    // A partial query tile's padding rows, which masks that do not look at
    // seq_q keep (full, say), stay out of the hull.
    Value some = arith::AndIOp::create(b, lt(lo, hi), lt(idx(v * w), rowsComputed));
    bounds[0] = minIdx(bounds[0], lo);
    bounds[1] = arith::MaxSIOp::create(b, bounds[1], hi);
    // Vectors in order: the first with a kept key is the low end (rows from
    // the end of the loop, so take the lowest), the last the high one.
    bounds[2] = arith::SelectOp::create(b, some, minIdx(bounds[2], idx(v * w / step * step)),
                                        bounds[2]);
    int64_t end = llvm::divideCeil((v + 1) * w, step) * step;
    bounds[3] = arith::SelectOp::create(b, some, idx(end), bounds[3]);
  }
  for (auto [i, bound] : llvm::enumerate(bounds))
    memref::StoreOp::create(b, bound, HULL, ValueRange{idx(i)});
}

/// Partial or edge tiles of a window mask (causal, sliding windows and their
/// compositions) without mods: the keep test is index arithmetic, so it runs
/// on whole vectors of query rows (the lanes of S^T), 16 elements per compare
/// instead of one scalar branch each; written as the keep bias
/// (storeKeepBias). Rows past `rows` are never written out.
void FlashKernelBuilder::applyMaskVectorized(Value k0, Value cols, Value full) {
  int64_t w = cfg.vectorWidth;
  auto indexVec = VectorType::get({w}, b.getIndexType());
  SmallVector<int64_t> iota(w);
  for (int64_t l = 0; l < w; ++l)
    iota[l] = l;
  Value lanes = arith::ConstantOp::create(b, b.getIndexVectorAttr(iota));
  auto boolVec = VectorType::get({w}, b.getI1Type());
  loop(0, blockKv, 1, [&](Value j) {
    Value kPos = vector::BroadcastOp::create(b, indexVec, add(k0, j));
    // Keys past the sequence (an edge tile) are never kept.
    Value inKv = vector::BroadcastOp::create(b, boolVec, lt(j, cols));
    Value fullVec = vector::BroadcastOp::create(b, boolVec, full);
    SmallVector<Value> keeps;
    for (int64_t i = 0; i < blockQ; i += w) {
      Value qPos = arith::AddIOp::create(
          b, vector::BroadcastOp::create(b, indexVec, add(q0, idx(i))), lanes);
      Value keep = emitMaskKeepsVector(b, b.getLoc(), op.getMask(), qPos, kPos, seqQ, seqKv);
      keeps.push_back(arith::AndIOp::create(b, arith::OrIOp::create(b, keep, fullVec), inKv));
    }
    storeKeepBias(j, keeps);
  });
}

/// A partial or edge tile of a window mask and a mask_mod of integer ops and
/// loads (no score_mod): the body runs on whole vectors of query rows (the
/// lanes of S^T), in three stages, each where its operands change: the ops
/// of the rows alone (document_id[b, q]) once per tile for each vector of
/// rows, those of the key alone (document_id[b, kv]) once per key as
/// scalars, and the rest per key and vector of rows, loads as gathers.
/// Lanes past `rows` or `cols`, or of a full tile, are not evaluated: no
/// error comes from them, as in the scalar pass. Written as the keep bias
/// (storeKeepBias).
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
    SmallVector<Value> keeps;
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
      keeps.push_back(keep);
    }
    storeKeepBias(j, keeps);
  });
}
