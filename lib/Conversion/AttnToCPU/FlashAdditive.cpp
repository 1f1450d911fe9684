//===- FlashAdditive.cpp - additive (Bahdanau) scores of a KV tile ---------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// S^T[j, i] = scale * sum_d v_d tanh(k[j, d] + q[i, d]) for a visited KV
// tile, in the Q K^T register blocks of dot-product scores (scoreBlocks):
// per step d, a vector of rows of Q^T (q unscaled) plus a broadcast k
// element, its tanh, times a broadcast v_d into the accumulator. tanh is
// vectorized from the softmax's 2^x: tanh|x| = (1 - t) / (1 + t) with t =
// 2^(-2 |x| log2 e) in (0, 1], the sign copied back. No tensor of pairs x
// head_dim is ever formed.
//
//===----------------------------------------------------------------------===//

#include "FlashKernelBuilder.h"

#include "attnc/Conversion/AttnToCPU/ExpNonPositive.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

/// VA = the head's v (v[h] of a per-head [heads, head_dim], else v); the
/// columns past head_dim stay 0, so padded steps add nothing.
void FlashKernelBuilder::loadAdditiveVector() {
  StringRef name = op.getAdditiveAttr().getValue();
  bool perHead = modInputs.extentsOf(name).size() == 2;
  loop(0, dimPadded, 1, [&](Value d) { memref::StoreOp::create(b, f32(0), VA, d); });
  loop(0, dim, 1, [&](Value d) {
    SmallVector<Value> at = perHead ? SmallVector<Value>{head, d} : SmallVector<Value>{d};
    memref::StoreOp::create(b, modInputs.element(b, b.getLoc(), name, at), VA, d);
  });
}

/// tanh of a vector of f32, to about 2e-7 absolute (the 2^x polynomial's
/// accuracy; the quotient's error is absolute near 0).
Value FlashKernelBuilder::emitTanh(OpBuilder &nb, Location loc, Value x) {
  auto splat = [&](double v) {
    return arith::ConstantOp::create(
               nb, loc, DenseElementsAttr::get(vecType(), nb.getF32FloatAttr(float(v))))
        .getResult();
  };
  Value ax = math::AbsFOp::create(nb, loc, x);
  Value t = emitExp2NonPositive(nb, loc,
                                arith::MulFOp::create(nb, loc, ax, splat(-2.88539008177792681)));
  Value one = splat(1.0);
  Value r = arith::DivFOp::create(nb, loc, arith::SubFOp::create(nb, loc, one, t),
                                  arith::AddFOp::create(nb, loc, one, t));
  return math::CopySignOp::create(nb, loc, r, x);
}

void FlashKernelBuilder::computeAdditiveScores(Value k0, Value cols, bool biased) {
  double log2e = 1.44269504088896341;
  double factor = op.getScaleAttr().getValueAsDouble() * (base2Scores ? log2e : 1.0);
  Value scale = vector::BroadcastOp::create(b, vecType(), f32(factor));
  scoreBlocks(k0, cols, dim, scale,
              [&](OpBuilder &nb, Location loc, Value d, ArrayRef<Value> keyBases,
                  ArrayRef<Value> rowCols, ValueRange acc) {
                Value vd = vector::BroadcastOp::create(
                    nb, loc, vecType(), memref::LoadOp::create(nb, loc, VA, ValueRange{d}));
                return scoreStep(nb, loc, d, keyBases, rowCols, acc,
                                 [&](Value kb, Value q, Value sum) -> Value {
                                   Value t = emitTanh(nb, loc, arith::AddFOp::create(nb, loc, kb, q));
                                   return vector::FMAOp::create(nb, loc, vd, t, sum);
                                 });
              },
              /*fused=*/false, biased);
}
