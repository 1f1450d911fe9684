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

/// Emits exp(x) for a vector of f32 known to hold values <= 0 or -inf (the
/// online softmax only ever exponentiates s - max). Relative error about
/// 1.9e-7 (a degree-5 polynomial on [-1/2, 1/2]), exp(0) = 1 exactly; below
/// 2^-127 it gives 0.
Value emitExpNonPositive(OpBuilder &b, Location loc, Value x);

/// The same for 2^t, t <= 0 or -inf.
Value emitExp2NonPositive(OpBuilder &b, Location loc, Value t);

} // namespace mlir::attn

#endif // ATTNC_CONVERSION_ATTNTOCPU_EXPNONPOSITIVE_H
