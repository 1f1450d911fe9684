//===- FlashWeights.cpp - The attention weights of a query tile -----------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A kernel with `outputs = [..., weights]` writes weights[b, h, i, j] = p_ij /
// l_i once the KV walk has made the rows' max m and sum l final: the scores
// of every KV tile are computed again by the walk's own code (Q K^T, mods,
// mask), so the weights are exactly the probabilities `out` was averaged
// with. Tiles the mask skips, masked keys and rows that kept nothing (l = 0)
// get exactly 0. The pass is O(seq_q x seq_kv) per head, as the output is.
//
//===----------------------------------------------------------------------===//

#include "FlashKernelBuilder.h"

#include "attnc/Conversion/AttnToCPU/ExpNonPositive.h"
#include "attnc/Runtime/attnc_runtime.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

/// weights[row i0 + r, key] = lane r of p, for the lanes that are rows of the
/// tile.
void FlashKernelBuilder::storeWeightLanes(Value i0, Value key, Value p) {
  for (int64_t r = 0; r < cfg.vectorWidth; ++r) {
    Value i = add(i0, idx(r));
    ifThen(lt(i, rows), [&] {
      Value x = vector::ExtractOp::create(b, p, ArrayRef<int64_t>{r});
      Value at = add(offset(weightsS, batch, head, add(q0, i)), key);
      memref::StoreOp::create(b, fromF32(x), weightsBuf, ValueRange{at});
    });
  }
}

void FlashKernelBuilder::writeWeights() {
  int64_t w = cfg.vectorWidth;
  Location loc = b.getLoc();
  weightsS = readStrides(ATTNC_P_WEIGHTS_STRIDES);
  // The scores' prefetches look ahead to a next visited tile: none here.
  Value no = arith::ConstantIntOp::create(b, 0, 1);
  hasNextTile = valuesInScores = valuesInPV = no;
  nextK0 = idx(0);
  Value zero = fromF32(f32(0));
  Value log2e = vector::BroadcastOp::create(b, vecType(), f32(1.44269504088896341f));
  Value zeros = zeroVector(b, loc), ones = vector::BroadcastOp::create(b, vecType(), f32(1));
  Value tiles = arith::CeilDivSIOp::create(b, seqKv, idx(blockKv));
  loop(0, tiles, 1, [&](Value kTile) {
    Value k0 = mul(kTile, idx(blockKv));
    Value cols = minIdx(idx(blockKv), arith::SubIOp::create(b, seqKv, k0));
    auto [fullTile, emptyTile] = classifyKvTile(kTile);
    Value full = fullTile, empty = emptyTile; // structured bindings are not captured
    ifThenElse(
        empty,
        [&] {
          loop(0, rows, 1, [&](Value i) {
            Value base = add(offset(weightsS, batch, head, add(q0, i)), k0);
            loop(0, cols, 1, [&](Value j) {
              memref::StoreOp::create(b, zero, weightsBuf, ValueRange{add(base, j)});
            });
          });
        },
        [&] {
          if (widen)
            widenKvTile(k0, cols);
          Value elementPass =
              arith::OrIOp::create(b, lt(cols, idx(blockKv)), notI1(full));
          elementPass = arith::OrIOp::create(
              b, elementPass, arith::ConstantIntOp::create(b, !op.getScoreMod().empty(), 1));
          maskedScores(k0, cols, full, elementPass);
          loop(0, blockQ, w, [&](Value i0) {
            Value m = vector::LoadOp::create(b, vecType(), M, ValueRange{i0});
            Value l = vector::LoadOp::create(b, vecType(), L, ValueRange{i0});
            // A row that kept nothing has m = -inf: shift it by 0 instead
            // (s - m would be NaN) and weigh it 0.
            Value none = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, l, zeros);
            Value shift = arith::SelectOp::create(b, none, zeros, m);
            Value factor = arith::SelectOp::create(b, none, zeros,
                                                   arith::DivFOp::create(b, ones, l));
            loop(0, cols, 1, [&](Value j) {
              Value s = vector::LoadOp::create(b, vecType(), ST, ValueRange{j, i0});
              Value x = arith::SubFOp::create(b, s, shift);
              if (!base2Scores)
                x = arith::MulFOp::create(b, x, log2e);
              Value p = emitExp2NonPositive(b, loc, x, ExpAccuracy::f32, cfg.avx512Scalef);
              storeWeightLanes(i0, add(k0, j), arith::MulFOp::create(b, p, factor));
            });
          });
        });
  });
}
