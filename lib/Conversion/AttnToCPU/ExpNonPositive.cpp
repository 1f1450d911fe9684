//===- ExpNonPositive.cpp - exp for the online softmax --------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// exp(x) = 2^t with t = x log2(e) (the kernels fold log2(e) into the query
// scale when they can); 2^t = 2^n * 2^f with n = round(t), f = t - n in
// [-1/2, 1/2]. Because t <= 0, only the lower end needs a clamp: t is raised to
// -127 (which also maps -inf there), where the exponent field (n + 127) is 0
// and the result is exactly 0; on AVX-512, p * 2^n is one vscalefps and the
// clamp is -150, where 2^n rounds to 0. No upper clamp; NaN passes through: 9-12
// instructions per vector against about 24 for MLIR's general approximation,
// which guards both ends. 2^f is a degree-5 polynomial fitted for relative
// error with 2^0 = 1 exact (1.9e-7 at most on the interval, f32 Horner
// evaluation included; the degree-6 Taylor polynomial it replaced had 1.6e-7).
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttnToCPU/ExpNonPositive.h"

#include "attnc/Support/Exp2Polynomial.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;

Value mlir::attn::emitExp2NonPositive(OpBuilder &b, Location loc, Value t,
                                      ExpAccuracy accuracy, bool avx512Scalef) {
  auto type = cast<VectorType>(t.getType());
  auto intType = VectorType::get(type.getShape(), b.getI32Type());
  auto splat = [&](float v) -> Value {
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(type, b.getF32FloatAttr(v)));
  };
  auto splatInt = [&](int32_t v) -> Value {
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(intType, b.getI32IntegerAttr(v)));
  };
  // The clamp as select(lo > t, lo, t), x86's max operand order: one vmaxps
  // like maxnumf, but a NaN t stays NaN (maxnumf would give lo, exp = 0), so
  // a NaN score is a NaN weight and its row NaN, as in PyTorch.
  // t clamped at -125 so that p * 2^n stays a normal float, and lanes below
  // it (masked scores, -inf) set to 0 after: an underflowing or subnormal
  // result costs a microcode assist per instruction on Intel cores (a partial
  // tile's masked half: about 2x its time).
  Value lo = splat(-125.0f);
  Value below = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, lo, t);
  t = arith::SelectOp::create(b, loc, below, lo, t);
  Value n = math::RoundEvenOp::create(b, loc, t);
  Value f = arith::SubFOp::create(b, loc, t, n);
  // The polynomial of 2^f (Exp2Polynomial.h: exact at f = 0).
  ArrayRef<float> coefficients =
      accuracy == ExpAccuracy::f32 ? ArrayRef<float>(attnc::exp2poly::kF32)
                                    : ArrayRef<float>(attnc::exp2poly::kBf16);
  Value p = splat(coefficients.front());
  for (float c : coefficients.drop_front())
    p = math::FmaOp::create(b, loc, p, f, splat(c));
  if (avx512Scalef) {
    // AVX-512: p * 2^n in one vscalefps (instead of convert, add, shift,
    // multiply); exp(-inf) = 0 by the select after it.
    // The intrinsic directly: its operands are (a, b, passthrough, mask,
    // rounding), which x86vector's scalef op does not map in that order.
    Value allLanes = arith::ConstantIntOp::create(b, loc, -1, 16);
    Value currentRounding = arith::ConstantIntOp::create(b, loc, 4, 32);
    Value scaled = LLVM::CallIntrinsicOp::create(b, loc, type,
                                         b.getStringAttr("llvm.x86.avx512.mask.scalef.ps.512"),
                                         ValueRange{p, n, p, allLanes, currentRounding})
        .getResult(0);
    return arith::SelectOp::create(b, loc, below, splat(0.0f), scaled);
  }
  Value exponent =
      arith::AddIOp::create(b, loc, arith::FPToSIOp::create(b, loc, intType, n), splatInt(127));
  Value scale =
      arith::BitcastOp::create(b, loc, type, arith::ShLIOp::create(b, loc, exponent, splatInt(23)));
  return arith::SelectOp::create(b, loc, below, splat(0.0f),
                                 arith::MulFOp::create(b, loc, p, scale));
}
