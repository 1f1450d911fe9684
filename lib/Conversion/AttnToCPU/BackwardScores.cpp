//===- BackwardScores.cpp - a backward tile pair's P and dS ---------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// For one (query tile, KV tile) pair of a backward kernel: the scores and P
// (register-blocked along the keys, the mask on vectors of keys with block
// skipping for window masks), the element pass of mods and other masks with
// the score_mod's derivatives, dS, and the f32 tables' share of it
// (BackwardKernelBuilder.h).
//
//===----------------------------------------------------------------------===//

#include "BackwardKernelBuilder.h"

#include "attnc/Conversion/AttnToCPU/ExpNonPositive.h"
#include "attnc/Conversion/Common/InlineMod.h"
#include "attnc/Transforms/MaskModIntervals.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

/// For each register block of the pair's rows x vectors of keys: the dot
/// products of rows `rowsOf` (QF or DOF) with the tile's columns `columns`
/// (KT or VT) over head_dim, handed to `done` per vector with the row and
/// where the vector is in PS / DS.
void BackwardKernelBuilder::keyProducts(Value rowsOf, Value columns, Value target,
                                        KeyVector done) {
  registerBlocks(blockQ, blockKv / w, [&](Value i0, int64_t rows, int64_t c0, int64_t vecs) {
    auto at = [&](int64_t a, int64_t c) {
      return SmallVector<Value>{add(i0, idx(a)), idx((c0 + c) * w)};
    };
    auto compute = [&] {
      SmallVector<Value> acc = outerProducts(
          rows, vecs, idx(0), idx(dim),
          [&](int64_t a, Value d) { return load(rowsOf, {add(i0, idx(a)), d}); },
          [&](int64_t c, Value d) { return loadVec(columns, {d, idx((c0 + c) * w)}); },
          SmallVector<Value>(rows * vecs, zeroVec()));
      for (int64_t a = 0; a < rows; ++a)
        for (int64_t c = 0; c < vecs; ++c)
          done(add(i0, idx(a)), at(a, c), acc[a * vecs + c]);
    };
    if (!maskInBlock())
      return compute();
    // A block whose keys the rows' mask ranges miss is 0 (P and dS).
    auto [lo, hi] = keyRangeOf(i0);
    Value meets = arith::AndIOp::create(b, lt(lo, idx((c0 + vecs) * w)), lt(idx(c0 * w), hi));
    ifThenElse(meets, compute, [&] {
      for (int64_t a = 0; a < rows; ++a)
        for (int64_t c = 0; c < vecs; ++c)
          storeVec(zeroVec(), target, at(a, c));
    });
  });
}

/// RK: for each block of blockRows rows of the pair, the keys of the tile
/// the mask attribute may keep for them, [lo, hi); RR: for each block of
/// blockRows keys (dV's and dK's register blocks), the rows whose blocks may
/// keep one of them (maskInBlock kernels). Once per pair: the products of
/// its register blocks read them.
void BackwardKernelBuilder::storeKeyRanges(Value q0, Value k0) {
  for (int64_t r = 0; r * blockRows < blockQ; ++r) {
    Value first = add(q0, idx(r * blockRows));
    Value last = add(q0, idx(std::min((r + 1) * blockRows, blockQ)));
    auto [lo, hi] = emitKeyRange(b, b.getLoc(), op.getMask(), first, last, seqQ, seqKv);
    auto clamp = [&](Value key) {
      return minIdx(arith::MaxSIOp::create(b, arith::SubIOp::create(b, key, k0), idx(0)),
                    idx(blockKv));
    };
    store(clamp(lo), RK, {idx(r), idx(0)});
    store(clamp(hi), RK, {idx(r), idx(1)});
  }
  for (int64_t r = 0; r * blockRows < blockKv; ++r) {
    auto [lo, hi] = rowRangeOf(idx(r * blockRows), idx(std::min((r + 1) * blockRows, blockKv)));
    store(lo, RR, {idx(r), idx(0)});
    store(hi, RR, {idx(r), idx(1)});
  }
}

/// The tile's keys [lo, hi) the rows of the block at row i0 may keep.
std::pair<Value, Value> BackwardKernelBuilder::keyRangeOf(Value i0) {
  Value r = arith::DivUIOp::create(b, i0, idx(blockRows));
  return {load(RK, {r, idx(0)}), load(RK, {r, idx(1)})};
}

/// The rows [lo, hi) whose blocks may keep a key of [keyLo, keyHi): the
/// first and last block whose range meets it.
std::pair<Value, Value> BackwardKernelBuilder::rowRangeOf(Value keyLo, Value keyHi) {
  int64_t blocks = int64_t(llvm::divideCeil(blockQ, blockRows));
  auto loop = scf::ForOp::create(
      b, idx(0), idx(blocks), idx(1), ValueRange{idx(blockQ), idx(0)},
      [&](OpBuilder &nested, Location, Value r, ValueRange hull) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nested.getInsertionBlock(), nested.getInsertionPoint());
        Value lo = load(RK, {r, idx(0)}), hi = load(RK, {r, idx(1)});
        Value meets = arith::AndIOp::create(b, lt(lo, keyHi), lt(keyLo, hi));
        Value first = mul(r, idx(blockRows));
        Value last = minIdx(add(first, idx(blockRows)), idx(blockQ));
        scf::YieldOp::create(
            b, ValueRange{arith::SelectOp::create(b, meets, minIdx(hull[0], first), hull[0]),
                          arith::SelectOp::create(
                              b, meets, arith::MaxSIOp::create(b, hull[1], last), hull[1])});
      });
  return {loop.getResult(0), loop.getResult(1)};
}

/// PS = q . k for every row and key of the pair, the element pass's input;
/// where `fused` (a full tile without score_mod), P = 2^(q . k scale log2 e -
/// LS) instead, and with maskInBlock() P of every tile, 0 where the mask
/// attribute drops the pair or the key is past seq_kv (rows past seq_q have
/// LS = +inf).
void BackwardKernelBuilder::scoreBlocks(Value fused, Value q0, Value k0) {
  Value factor = splat(f32(op.getScaleOrDefault() * kLog2e));
  auto indexVec = VectorType::get({w}, b.getIndexType());
  SmallVector<int64_t> iota(w);
  for (int64_t l = 0; l < w; ++l)
    iota[l] = l;
  Value lanes = arith::ConstantOp::create(b, b.getIndexVectorAttr(iota));
  auto probabilities = [&](Value i, Value s) {
    Value t = arith::SubFOp::create(b, arith::MulFOp::create(b, s, factor), splat(load(LS, {i})));
    return emitExp2NonPositive(b, b.getLoc(), t, ExpAccuracy::f32, cfg.avx512Scalef);
  };
  auto masked = [&](Value i, Value key, Value p) {
    Value qPos = vector::BroadcastOp::create(b, indexVec, add(q0, i));
    Value kPos = arith::AddIOp::create(b, vector::BroadcastOp::create(b, indexVec, add(k0, key)),
                                       lanes);
    Value keep = arith::AndIOp::create(
        b, emitMaskKeepsVector(b, b.getLoc(), op.getMask(), qPos, kPos, seqQ, seqKv),
        arith::CmpIOp::create(b, arith::CmpIPredicate::slt, kPos,
                              vector::BroadcastOp::create(b, indexVec, seqKv)));
    return arith::SelectOp::create(b, keep, p, zeroVec()).getResult();
  };
  keyProducts(QF, KT, PS, [&](Value i, ArrayRef<Value> at, Value s) {
    Value p = select(
        fused, vecType(), [&] { return probabilities(i, s); },
        [&] { return maskInBlock() ? masked(i, at[1], probabilities(i, s)) : s; });
    storeVec(p, PS, at);
  });
}

/// PS (raw scores) -> P per element: 0 outside [rows) x [cols) and where the
/// mask (unless `full`) or the mask_mod drops it, else exp(score_mod(s) -
/// lse); SL = score_mod'(s) where P is kept (0 elsewhere, so dS is 0 there).
void BackwardKernelBuilder::elementPass(Value head, Value q0, Value rows, Value k0, Value cols,
                                        Value full) {
  double scale = op.getScaleOrDefault();
  auto onZero = [&](Value isZero) { ifThen(isZero, [&] { fail(b, 1); }); };
  auto readInput = [&](Operation *load, ArrayRef<Value> indices) {
    return loadInput(load, indices);
  };
  Type f32Type = b.getF32Type();
  loop(0, blockQ, 1, [&](Value i) {
    loop(0, blockKv, 1, [&](Value j) {
      Value qPos = add(q0, i), kPos = add(k0, j);
      Value inside = arith::AndIOp::create(b, lt(i, rows), lt(j, cols));
      auto ifOp = scf::IfOp::create(b, TypeRange{f32Type, f32Type}, inside, true, true);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(&ifOp.getThenRegion().front());
        Value s = arith::MulFOp::create(b, load(PS, {i, j}), f32(scale));
        Value slope = f32(1);
        if (scoreMod) {
          // d / d score, and d / d each table element it reads (recorded).
          SmallVector<Operation *> seeds = {nullptr};
          if (GS)
            llvm::append_range(seeds, tables->seeds());
          ModSlopes mod = inlineModWithSlopes(b, b.getLoc(), op.getScoreMod(),
                                              {s, batch, head, qPos, kPos}, onZero, readInput,
                                              seeds);
          s = mod.value;
          slope = mod.slopes.front();
          if (GS)
            tables->record(mod, i, j);
        }
        Value keep = select(full, b.getI1Type(),
                            [&] { return arith::ConstantIntOp::create(b, 1, 1).getResult(); },
                            [&] {
                              Value k = emitMaskKeeps(b, b.getLoc(), module, op.getMask(), qPos,
                                                      kPos, seqQ, seqKv);
                              if (!op.getMaskMod().empty())
                                k = arith::AndIOp::create(
                                    b, k,
                                    inlineMod(b, b.getLoc(), op.getMaskMod(),
                                              {batch, head, qPos, kPos}, onZero, readInput));
                              return k;
                            });
        Value t = arith::SubFOp::create(b, arith::MulFOp::create(b, s, f32(kLog2e)),
                                        load(LS, {i}));
        Value p = math::Exp2Op::create(b, t);
        scf::YieldOp::create(b, ValueRange{arith::SelectOp::create(b, keep, p, f32(0)),
                                           arith::SelectOp::create(b, keep, slope, f32(0))});
        b.setInsertionPointToStart(&ifOp.getElseRegion().front());
        scf::YieldOp::create(b, ValueRange{f32(0), f32(0)});
      }
      store(ifOp.getResult(0), PS, {i, j});
      if (scoreMod)
        store(ifOp.getResult(1), SL, {i, j});
    });
  });
}

/// DS = P (d_out . v - D) (times SL with a score_mod), over the pair.
void BackwardKernelBuilder::gradientScores() {
  keyProducts(DOF, VT, DS, [&](Value i, ArrayRef<Value> at, Value dp) {
    Value ds = arith::MulFOp::create(
        b, loadVec(PS, at), arith::SubFOp::create(b, dp, splat(load(D, {i}))));
    if (GS)
      storeVec(ds, GS, at);
    if (scoreMod)
      ds = arith::MulFOp::create(b, ds, loadVec(SL, at));
    storeVec(ds, DS, at);
  });
}

/// The pair's share of the f32 inputs' gradients: G = P (dP - D) times the
/// slopes the element pass recorded, where G is not 0 (kept, inside the tile).
void BackwardKernelBuilder::inputPass(Value chunk, Value rows, Value cols) {
  loop(0, rows, 1, [&](Value i) {
    loop(0, cols, 1, [&](Value j) {
      Value g = load(GS, {i, j});
      Value nonzero = arith::CmpFOp::create(b, arith::CmpFPredicate::UNE, g, f32(0));
      ifThen(nonzero, [&] { tables->accumulate(g, i, j, batch, kvHead, chunk); });
    });
  });
}
