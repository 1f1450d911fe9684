//===- ExpNonPositive.h - exp for the online softmax ------------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_ATTNTOCPU_EXPNONPOSITIVE_H
#define ATTNC_CONVERSION_ATTNTOCPU_EXPNONPOSITIVE_H

#include "mlir/IR/Builders.h"

namespace mlir::attn {

/// How exact 2^t must be: f32 (relative 1.9e-7, a degree-5 polynomial on
/// [-1/2, 1/2]) or bf16, for values that are rounded to bf16 next (relative
/// 1.0e-4, degree 3).
enum class ExpAccuracy { f32, bf16 };

/// Emits 2^t for a vector of f32, made for values <= 0 or -inf (the softmax
/// pass exponentiates s - max; exp(x) is 2^(x log2 e)). 2^0 = 1 exactly at
/// either accuracy; below 2^-127 it gives 0. Positive t up to 127 are as
/// accurate (n + 127 still fits the exponent field): the fused softmax takes
/// s - m against a running max m the scores may pass, capped at 64.
/// `avx512Scalef`: the vectors are AVX-512 zmm, and p * 2^n is one vscalefps.
Value emitExp2NonPositive(OpBuilder &b, Location loc, Value t,
                          ExpAccuracy accuracy = ExpAccuracy::f32, bool avx512Scalef = false);

} // namespace mlir::attn

#endif // ATTNC_CONVERSION_ATTNTOCPU_EXPNONPOSITIVE_H
